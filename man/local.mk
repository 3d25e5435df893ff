# Manual pages, checked by tests/integration/test_manlint.sh.
dist_man_MANS += man/ironbelld.8 man/ironbell.1 man/ironbell.yaml.5
# The Kea hook library's page: documentation, installed whether or not the
# library is built here.
dist_man_MANS += man/ironbell-kea.8
