bin_PROGRAMS += ironbell
ironbell_SOURCES = cli/ironbell.c
ironbell_CFLAGS = $(AM_CFLAGS) $(CURL_CFLAGS) $(JANSSON_CFLAGS)
ironbell_LDADD = $(COMMON_LIBS) $(CURL_LIBS)
