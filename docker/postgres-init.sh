#!/bin/sh
# First start of the compose stack's PostgreSQL: memsieve works as the role `memsieve`,
# which is not a superuser and owns only its database; pgvector is created here by the
# superuser. The password is read from the environment inside psql (\getenv), so it is on
# no command line.
set -eu
: "${MEMSIEVE_DB_PASSWORD:?set MEMSIEVE_DB_PASSWORD}"
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres <<'SQL'
\getenv app_password MEMSIEVE_DB_PASSWORD
CREATE ROLE memsieve LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION PASSWORD :'app_password';
CREATE DATABASE memsieve OWNER memsieve;
REVOKE ALL ON DATABASE memsieve FROM PUBLIC;
GRANT CONNECT ON DATABASE memsieve TO memsieve;
\connect memsieve
CREATE EXTENSION IF NOT EXISTS vector;
SQL
