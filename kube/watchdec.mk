# kube/watchdec: see kube/local.mk.
