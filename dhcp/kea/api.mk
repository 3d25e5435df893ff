# The follower of ironbelld's admin API (the hook's "api" source).
IBKEA_C_FILES += dhcp/kea/follow-api.c
