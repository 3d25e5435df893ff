noinst_LIBRARIES += libstore.a
libstore_a_SOURCES = \
	store/store.h store/store-internal.h \
	store/kinds.c store/schema.c store/writer.c store/reader.c store/selector.c \
	store/validate.c
libstore_a_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(SQLITE_CFLAGS)
STORE_LIBS = libstore.a $(SQLITE_LIBS)

include store/validate.mk
