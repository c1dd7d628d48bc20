/* gp_api.h — what every public libprof header shares: the visibility of
 * exported functions (the shim links libprof statically and hides it; the
 * tools link it statically too). */
#ifndef GP_API_H
#define GP_API_H

#define GP_API __attribute__((visibility("default")))

#endif /* GP_API_H */
