/* The headers the VOL ABI is generated from. */
#include "hdf5.h"
#include "H5VLconnector.h"
#include "H5VLconnector_passthru.h"
#include "H5VLnative.h"
#include "H5PLextern.h"
#include "H5VLpassthru.h" /* H5VL_pass_through_register: the built-in pass_through as an under connector */
