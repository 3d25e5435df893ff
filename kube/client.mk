# kube/client: see kube/local.mk.
