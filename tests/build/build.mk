# build tests (owner: libprof/build): the repository's own checks
# (scripts/check-layers.sh, check-doc-paths.sh, check-header-guards.sh, outputs-ab.sh,
# format-check.sh).  Included from tests/build.mk; script tests run through
# wrappers that pass the build dir.
BUILDT_DIR := $(B)/tests/build
BUILD_SH_TESTS := test_check_layers test_doc_paths test_header_guards test_outputs_ab

$(BUILDT_DIR)/run_%: tests/build/%.sh | $(BUILDT_DIR)/
	printf '#!/bin/sh\nexec sh %s %s\n' '$<' '$(B)' > $@ && chmod +x $@

# the format test checks the folders the Makefile holds to the format
$(BUILDT_DIR)/run_test_format_check: tests/build/test_format_check.sh FORCE | $(BUILDT_DIR)/
	printf '#!/bin/sh\nFORMAT_DIRS="%s" exec sh %s %s\n' '$(FORMAT_DIRS)' '$<' '$(B)' > $@ && chmod +x $@

BUILD_TESTS := $(BUILD_SH_TESTS) test_format_check
TEST_BINS += $(BUILD_TESTS:%=$(BUILDT_DIR)/run_%)
TESTS += $(BUILD_TESTS:%=$(BUILDT_DIR)/run_%)
