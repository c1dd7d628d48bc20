/* gp_error.c — gp_strerror(), from the GP_ERRORS list. */
#include "gp_error.h"

GP_API const char *gp_strerror(int err)
{
	/* cases made by a macro: */
	/* clang-format off */
	switch (err) {
#define GP_ERR_CASE_(name, value, msg) case name: return msg;
	GP_ERRORS(GP_ERR_CASE_)
#undef GP_ERR_CASE_
	default: return "unknown error";
	}
	/* clang-format on */
}
