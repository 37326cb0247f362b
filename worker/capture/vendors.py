"""Vendor token formats with a fixed prefix, from the providers' public token formats and
the rule list of gitleaks (MIT). Pure data."""

from __future__ import annotations

from memsieve.capture.shapes import B as _B
from memsieve.capture.shapes import E as _E
from memsieve.capture.shapes import Pattern, classes, not_placeholder, random_looking
from memsieve.capture.shapes import p as _p

VENDOR_PATTERNS: tuple[Pattern, ...] = (
    _p("shopify_token", _B + r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}" + _E, needs=("shp",)),
    _p("digitalocean_token", _B + r"do[opr]_v1_[a-f0-9]{64}" + _E, needs=("_v1_",)),
    _p("vault_token", _B + r"hv[sbr]\.[A-Za-z0-9_-]{24,}" + _E, needs=("hvs.", "hvb.", "hvr.")),
    _p(
        "terraform_token",
        _B + r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,}",
        needs=(".atlasv1.",),
    ),
    _p("doppler_token", _B + r"dp\.(?:pt|st|ct|sa|scim|audit)\.[A-Za-z0-9]{40,}", needs=("dp.",)),
    _p("databricks_token", _B + r"dapi[a-f0-9]{32}(?:-\d)?" + _E, needs=("dapi",)),
    _p("grafana_token", _B + r"gl(?:c|sa)_[A-Za-z0-9_=+/-]{32,}" + _E, needs=("glc_", "glsa_")),
    _p("newrelic_key", _B + r"NR(?:AK|JS|II|RA)-[A-Z0-9]{19,32}" + _E, needs=("NR",)),
    _p("linear_key", _B + r"lin_(?:api|oauth)_[A-Za-z0-9]{40}" + _E, needs=("lin_",)),
    _p("postman_key", _B + r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}" + _E, needs=("PMAK-",)),
    _p("pulumi_token", _B + r"pul-[a-f0-9]{40}" + _E, needs=("pul-",)),
    _p("atlassian_token", _B + r"AT(?:ATT|CTT|BB)[A-Za-z0-9_=+/-]{20,}" + _E, needs=("AT",)),
    _p("figma_token", _B + r"figd_[A-Za-z0-9_-]{30,}" + _E, needs=("figd_",)),
    _p("heroku_key", _B + r"HRKU-[A-Za-z0-9_-]{30,}" + _E, needs=("HRKU-",)),
    _p("mailgun_key", _B + r"key-[a-f0-9]{32}" + _E, needs=("key-",)),
    _p("dropbox_token", _B + r"sl\.[A-Za-z0-9_-]{60,}" + _E, needs=("sl.",)),
    _p(
        "age_secret_key", r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}", needs=("AGE-",)
    ),
    _p("supabase_token", _B + r"sb[pa]_[a-f0-9]{40}" + _E, needs=("sbp_", "sba_")),
    _p("sentry_token", _B + r"sntry[su]_[A-Za-z0-9_=+/-]{30,}", needs=("sntry",)),
    _p(
        "sentry_dsn",
        r"https?://([a-f0-9]{32})(?::[a-f0-9]{32})?@[\w.-]*sentry[\w.-]*",
        1,
        needs=("sentry",),
    ),
    _p("airtable_token", _B + r"pat[A-Za-z0-9]{14}\.[a-f0-9]{64}" + _E, needs=("pat",)),
    _p(
        "notion_token",
        _B + r"(?:secret_[A-Za-z0-9]{43}|ntn_[A-Za-z0-9]{40,})" + _E,
        needs=("secret_", "ntn_"),
    ),
    _p(
        "webhook_url",
        r"https://(?:discord(?:app)?\.com/api/webhooks/\d+/[\w-]{20,}"
        r"|[\w-]+\.webhook\.office\.com/\S{20,}|outlook\.office\.com/webhook/\S{20,})",
        needs=("https://",),
    ),
    # Mattermost incoming webhooks: the 26-character id after /hooks/ is the credential.
    _p(
        "webhook_url",
        r"https?://[\w.-]+(?::\d+)?/hooks/[a-z0-9]{26}(?![a-z0-9])",
        needs=("/hooks/",),
    ),
    _p("mailersend_token", _B + r"mlsn\.[a-f0-9]{64}" + _E, needs=("mlsn.",)),
    # ASP.NET Core Data Protection payloads: auth and antiforgery cookies.
    _p("aspnet_cookie", _B + r"CfDJ8[A-Za-z0-9_-]{60,}", needs=("CfDJ8",)),
    _p("newrelic_key", _B + r"[a-f0-9]{36}NRAL" + _E, needs=("NRAL",)),
    _p(
        "langfuse_key",
        _B + r"sk-lf-[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}" + _E,
        needs=("sk-lf-",),
    ),
    _p(
        "mercadopago_token",
        _B + r"APP_USR-\d{10,20}-\d{6}-[0-9a-f]{32}-\d{6,12}" + _E,
        needs=("APP_USR-",),
    ),
    _p("sonar_token", _B + r"sq[pua]_[a-f0-9]{40}" + _E, needs=("sqp_", "squ_", "sqa_")),
    _p(
        "hubspot_token",
        _B
        + r"pat-(?:na|eu|ap)\d-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
        + _E,
        needs=("pat-",),
    ),
    _p("twitch_token", r"(?<![\w-])oauth:[a-z0-9]{30}" + _E, needs=("oauth:",)),
    _p("square_token", _B + r"(?:sq0atp|sq0csp)-[A-Za-z0-9_-]{22,43}" + _E, needs=("sq0",)),
    _p("square_token", _B + r"EAAA[A-Za-z0-9_-]{60}" + _E, needs=("EAAA",)),
    _p(
        "braintree_token",
        r"access_token\$(?:production|sandbox)\$[a-z0-9]{16}\$[a-f0-9]{32}",
        needs=("access_token$",),
    ),
    _p("mapbox_token", _B + r"[ps]k\.eyJ[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,}", needs=(".eyJ",)),
    _p(
        "azure_ad_secret",
        r"(?<![\w~.-])[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![\w~.-])",
        needs=("Q~",),
    ),
    _p("google_oauth", _B + r"GOCSPX-[A-Za-z0-9_-]{28}" + _E, needs=("GOCSPX-",)),
    _p("google_oauth", _B + r"ya29\.[A-Za-z0-9_-]{30,}", needs=("ya29.",)),
    _p("google_oauth", r"(?<![\w/])1//0[A-Za-z0-9_-]{40,}", needs=("1//0",)),
    _p(
        "ai_api_key",
        # Replicate, Groq, Perplexity, xAI, OpenRouter, LangSmith, Pinecone, Tavily, Cohere-like.
        _B
        + r"(?:r8_|gsk_|pplx-|xai-|sk-or-v1-|lsv2_(?:pt|sk)_|pcsk_|tvly-|fc-)[A-Za-z0-9_-]{20,}"
        + _E,
        0,
        lambda v: classes(v) >= 2,
        needs=("r8_", "gsk_", "pplx-", "xai-", "sk-or-", "lsv2_", "pcsk_", "tvly-", "fc-"),
    ),
    _p("hf_org_token", _B + r"api_org_[A-Za-z0-9]{30,}" + _E, needs=("api_org_",)),
    _p(
        "ci_token",
        _B
        + r"(?:CCIPAT_|bkua_|dckr_pat_|rubygems_|CLOJARS_|glrt-|nfp_|vercel_)[A-Za-z0-9_-]{20,}"
        + _E,
        needs=("CCIPAT_", "bkua_", "dckr_pat_", "rubygems_", "CLOJARS_", "nfp_", "vercel_"),
    ),
    _p("nuget_key", _B + r"oy2[a-z0-9]{43}" + _E, needs=("oy2",)),
    _p("crates_token", _B + r"cio[A-Za-z0-9]{32}" + _E, 0, random_looking, needs=("cio",)),
    _p("brevo_key", _B + r"xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}" + _E, needs=("xkeysib-",)),
    _p(
        "planetscale_token",
        _B + r"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.=-]{32,}" + _E,
        needs=("pscale_",),
    ),
    _p("flutterwave_key", _B + r"FLW(?:SECK|PUBK)(?:_TEST)?-[a-f0-9]{32}-X" + _E, needs=("FLW",)),
    _p("easypost_key", _B + r"EZ[AT]K[A-Za-z0-9]{54}" + _E, needs=("EZAK", "EZTK")),
    _p("shippo_token", _B + r"shippo_(?:live|test)_[a-f0-9]{40}" + _E, needs=("shippo_",)),
    _p("alibaba_key", _B + r"LTAI[A-Za-z0-9]{20}" + _E, needs=("LTAI",)),
    _p("tencent_key", _B + r"AKID[A-Za-z0-9]{32}" + _E, needs=("AKID",)),
    _p(
        "yandex_token",
        _B + r"(?:AQVN[A-Za-z0-9_-]{35,38}|y[0-3]_[A-Za-z0-9_-]{55,})" + _E,
        needs=("AQVN", "y0_", "y1_", "y2_", "y3_"),
    ),
    _p("fly_token", r"FlyV1 fm\d_[A-Za-z0-9+/=_,-]{40,}", needs=("FlyV1",)),
    _p("okta_token", _B + r"00[A-Za-z0-9_-]{40}" + _E, 0, lambda v: classes(v) >= 3, needs=("00",)),
    _p(
        "launchdarkly_key",
        _B + r"(?:sdk|mob|api)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}" + _E,
        needs=("sdk-", "mob-", "api-"),
    ),
    _p("cloudflare_origin_ca_key", _B + r"v1\.0-[0-9a-f]{24}-[0-9a-f]{146}" + _E, needs=("v1.0-",)),
    # Azure DevOps personal access tokens: 52 characters of lower-case base32.
    _p(
        "azure_devops_pat",
        _B + r"[a-z2-7]{52}" + _E,
        0,
        lambda v: sum(c.isdigit() for c in v) >= 4,
        needs=("2", "3", "4", "5", "6", "7"),
    ),
    _p(
        "discord_bot_token",
        _B + r"[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}" + _E,
        0,
        lambda v: classes(v) >= 3,
        needs=(".",),
    ),
    # `Authorization: <scheme> <credential>` for any scheme (Splunk, Token, ApiKey, SSWS …).
    _p(
        "authorization_header",
        r"(?i:\bauthorization)[\"']?\s*[:=]\s*[\"']?(?:[A-Za-z][A-Za-z0-9_-]{1,20}\s+)?"
        r"([A-Za-z0-9._~+/=-]{16,})",
        1,
        lambda v: not_placeholder(v) and classes(v) >= 2,
        needs=("uthorization", "UTHORIZATION"),
    ),
    _p("neon_password", _B + r"npg_[A-Za-z0-9]{12,}" + _E, 0, random_looking, needs=("npg_",)),
    _p("salesforce_token", _B + r"00D[A-Za-z0-9]{12,15}![A-Za-z0-9_.]{40,}", needs=("00D",)),
    _p("resend_key", _B + r"re_[A-Za-z0-9]{8}_[A-Za-z0-9]{24}" + _E, needs=("re_",)),
    _p("contentful_token", _B + r"CFPAT-[A-Za-z0-9_-]{43}" + _E, needs=("CFPAT-",)),
    _p(
        "session_cookie",
        r"(?i:connect\.sid|phpsessid|jsessionid|asp\.net_sessionid|laravel_session|"
        r"_session_id|sessionid|session_token|session)=([^;\s\"',]{16,})",
        1,
        random_looking,
        needs=("=",),
    ),
    _p(
        "password_hash",
        # A crypt/bcrypt/argon2 hash can be cracked offline: treat it as a credential.
        r"\$(?:2[abxy]\$\d\d\$[./A-Za-z0-9]{53}|apr1\$[./A-Za-z0-9]{1,8}\$[./A-Za-z0-9]{22}"
        r"|[56]\$(?:rounds=\d+\$)?[./A-Za-z0-9]{1,16}\$[./A-Za-z0-9]{43,86}"
        r"|argon2(?:id|i|d)\$v=\d+\$m=\d+,t=\d+,p=\d+\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+)",
        needs=("$",),
    ),
)
