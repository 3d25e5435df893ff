#!/bin/sh
# Runs the replay build of a fuzz target over its seed corpus.
# $1 is the marker file tests/fuzz/X.fuzz.
name=$(basename "$1" .fuzz)
exec "${top_builddir:?}/tests/fuzz/${name}_replay" "${top_srcdir:?}/tests/fuzz/corpus/$name"
