// libyaml's public C API, from the system's libyaml-dev (pkg-config yaml-0.1).
#include <yaml.h>
