#ifndef OFFSTAGE_CSNDFILE_SHIM_H
#define OFFSTAGE_CSNDFILE_SHIM_H
#include <sndfile.h>
#endif
