# What Kubernetes mode does, read back from the API with kubectl: the
# write-back of a workflow run, the Lease between two instances, the
# sequence Cluster API's Tinkerbell provider performs.
TESTS += tests/integration/test_kube_writeback.sh
EXTRA_DIST += tests/integration/test_kube_writeback.sh
TESTS += tests/integration/test_kube_lease.sh
EXTRA_DIST += tests/integration/test_kube_lease.sh
TESTS += tests/integration/test_kube_capt.sh
EXTRA_DIST += tests/integration/test_kube_capt.sh
