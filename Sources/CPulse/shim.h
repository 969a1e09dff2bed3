#ifndef OFFSTAGE_CPULSE_SHIM_H
#define OFFSTAGE_CPULSE_SHIM_H
#include <pulse/pulseaudio.h>
#endif
