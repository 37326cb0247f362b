#!/bin/sh
# Redis for memsieve's compose stack: ACL users whose passwords come from the environment
# (never a command line, which `ps` shows to everyone), no default user, and the same
# rights for the application as the embedded Redis (worker/ops/services.py,
# REDIS_APP_RULES; tests/unit/test_compose.py keeps them equal).
set -eu
: "${REDIS_PASSWORD:?set REDIS_PASSWORD}" "${REDIS_ADMIN_PASSWORD:?set REDIS_ADMIN_PASSWORD}"
umask 077
cat > /tmp/memsieve-users.acl <<ACL
user default off resetpass nocommands
user memsieve-admin on >${REDIS_ADMIN_PASSWORD} ~* &* +@all
user memsieve on >${REDIS_PASSWORD} ~* &* +@all -@admin -@dangerous +bgrewriteaof +client|setname +client|setinfo +client|id
ACL
# The broker holds accepted-but-not-yet-captured messages: keep them, fsynced, across restarts.
exec redis-server --aclfile /tmp/memsieve-users.acl --appendonly yes --appendfsync always
