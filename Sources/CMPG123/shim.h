#ifndef OFFSTAGE_CMPG123_SHIM_H
#define OFFSTAGE_CMPG123_SHIM_H
#include <mpg123.h>
#endif
