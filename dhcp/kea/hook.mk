# The shared object kea-dhcp4 loads, and its tests.
