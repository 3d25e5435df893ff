# Manual pages, checked by tests/integration/test_manlint.sh.
dist_man_MANS += man/ironbelld.8 man/ironbell.1 man/ironbell.yaml.5
