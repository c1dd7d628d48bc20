# build tests (owner: libprof/build): the repository's own checks
# (scripts/check-layers.sh, scripts/format-check.sh).  Included from
# tests/build.mk; script tests run through wrappers that pass the build dir.
BUILDT_DIR := $(B)/tests/build
BUILD_SH_TESTS := test_check_layers

$(BUILDT_DIR)/run_%: tests/build/%.sh | $(BUILDT_DIR)/
	printf '#!/bin/sh\nexec sh %s %s\n' '$<' '$(B)' > $@ && chmod +x $@

TEST_BINS += $(BUILD_SH_TESTS:%=$(BUILDT_DIR)/run_%)
TESTS += $(BUILD_SH_TESTS:%=$(BUILDT_DIR)/run_%)
