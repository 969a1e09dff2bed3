#ifndef OFFSTAGE_CGPS_SHIM_H
#define OFFSTAGE_CGPS_SHIM_H
#include <gps.h>
#endif
