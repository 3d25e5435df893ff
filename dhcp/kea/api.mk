# The follower of ironbelld's admin API (the hook's "api" source).
IBKEA_SOURCES += dhcp/kea/follow-api.c
