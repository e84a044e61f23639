# hopbench — plain GNU make.
#   make            ./hopbench (release)          make lab     build and run the default lab
#   make test       unit + integration tests      make asan    ASan+UBSan build + full suite
#   make tsan       ThreadSanitizer, threaded set make bench   peer comparisons, CPU cross-check
#   make test-unit  everything built, unit tests and fuzz corpora only
#   make format | format-check | lint | install | dist | clean
#   make deps-check   (root) scripts/deps.sh brings every program of scripts/programs.txt to a
#                     clean Debian 12 root (docs/deps.md)
# V=1 prints commands. CFLAGS/LDFLAGS from the command line are appended.
# FLAVOUR=asan|tsan builds into build/FLAVOUR/ only: ./hopbench, and so make install,
# make lab and make bench, are the release build (build/release/hopbench) whatever FLAVOUR is.

PREFIX  ?= /usr/local
DESTDIR ?=
CC      ?= cc
FLAVOUR ?= release
V       ?= 0

VERSION := $(shell git describe --always --dirty --tags 2>/dev/null || echo 0.1.0)

WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
        -Wold-style-definition -Wvla -Wwrite-strings -Wformat=2 -Wundef -Wpointer-arith \
        -Wimplicit-fallthrough -Wcast-qual -Wnull-dereference -Werror
BASE_CFLAGS := -std=c11 -D_GNU_SOURCE -pthread $(WARN) -MMD -MP -Isrc \
               -DHOPBENCH_VERSION='"$(VERSION)"'
BASE_LDFLAGS := -pthread
LIBS := -ljansson -lcrypto -luring -lz -lm

ifeq ($(FLAVOUR),release)
  OPT := -O2 -g
else ifeq ($(FLAVOUR),asan)
  OPT := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
  BASE_LDFLAGS += -fsanitize=address,undefined
else ifeq ($(FLAVOUR),tsan)
  OPT := -O1 -g -fsanitize=thread
  BASE_LDFLAGS += -fsanitize=thread
else
  $(error FLAVOUR must be release, asan or tsan)
endif

FINAL_CFLAGS  := $(BASE_CFLAGS) $(OPT) $(CFLAGS)
FINAL_LDFLAGS := $(BASE_LDFLAGS) $(LDFLAGS)

B := build/$(FLAVOUR)
LIB_SRC  := $(filter-out src/main.c,$(wildcard src/*.c src/*/*.c))
LIB_OBJ  := $(LIB_SRC:%.c=$(B)/%.o)
MAIN_OBJ := $(B)/src/main.o
UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(B)/tests/%)
FLOOR_BIN := $(B)/bench/floor
PROTOFLOOR_BIN := $(B)/bench/protofloor
BENCH_BIN := $(FLOOR_BIN) $(PROTOFLOOR_BIN)
FUZZ_SRC := $(wildcard fuzz/fuzz_*.c)
FUZZ_NAMES := $(FUZZ_SRC:fuzz/fuzz_%.c=%)
REPLAY_BIN := $(FUZZ_NAMES:%=$(B)/fuzz/replay_%)
TOOL_BIN := $(patsubst tests/tools/%.c,$(B)/tools/%,$(wildcard tests/tools/*.c))
FUZZ_SECONDS ?= 60
PROTO_SRC := $(wildcard src/proto/*.c)

ifeq ($(V),1)
  Q :=
  say = @true
else
  Q := @
  say = @printf '  %-6s %s\n' $(1) $(2)
endif

.PHONY: all deps test-deps lint-deps deps-check lab test test-unit unit integration asan tsan bench fuzz format \
        format-check lint install install-files clean static image image-stack dist FORCE
ifeq ($(FLAVOUR),release)
all: hopbench
else
all: $(B)/hopbench
endif

# scripts/deps.sh installs the Debian packages a purpose needs that are missing; it
# picks the compiler's package (gcc, or clang and its runtimes) from CC and FLAVOUR.
# The build's packages come first: make -j2 would otherwise start the build's and the tests'
# apt-get at once (deps.sh also takes turns on a lock, for makes run side by side).
DEPS := CC='$(CC)' FLAVOUR='$(FLAVOUR)' sh scripts/deps.sh
deps:
	@$(DEPS) build
test-deps: deps
	@$(DEPS) test
lint-deps: deps
	@$(DEPS) lint

# A clean Debian 12 root (debootstrap minbase), scripts/deps.sh run in it for each purpose, and
# every program of scripts/programs.txt there; DEPS_CACHE (outside the clone) keeps the minbase
# tar, the downloaded packages and the proven root, which a later run with the same deps.sh and
# list checks again in seconds instead of building (docs/deps.md).
DEPS_CACHE ?= /var/cache/hopbench
deps-check:
	@sh scripts/deps.sh check
	@DEPS_CACHE='$(DEPS_CACHE)' DEBIAN_MIRROR='$(DEBIAN_MIRROR)' bash scripts/deps-check.sh

# Rebuild everything when the flags change (redis .make-settings).
$(B)/.flags: FORCE | deps
	@mkdir -p $(B)
	@echo '$(CC) $(FINAL_CFLAGS) $(FINAL_LDFLAGS)' | cmp -s - $@ || \
	  echo '$(CC) $(FINAL_CFLAGS) $(FINAL_LDFLAGS)' > $@

$(B)/%.o: %.c $(B)/.flags
	@mkdir -p $(dir $@)
	$(call say,CC,$<)
	$(Q)$(CC) $(FINAL_CFLAGS) -c $< -o $@

$(B)/libhopbench.a: $(LIB_OBJ)
	$(call say,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(B)/hopbench: $(MAIN_OBJ) $(B)/libhopbench.a
	$(call say,LINK,$@)
	$(Q)$(CC) $(FINAL_LDFLAGS) -o $@ $^ $(LIBS)

# ./hopbench is only ever a copy of the release build: an instrumented flavour
# (make asan, make tsan, and the tests they run) asks a release make for it. The
# copy is compared each time, so whatever else was left there is replaced.
ifeq ($(FLAVOUR),release)
hopbench: $(B)/hopbench FORCE
	$(Q)cmp -s $< $@ || { cp $< $@.tmp && mv -f $@.tmp $@; }
else
hopbench: FORCE
	$(Q)$(MAKE) --no-print-directory FLAVOUR=release hopbench
endif

$(B)/tests/%: tests/unit/%.c $(B)/libhopbench.a $(B)/.flags | test-deps
	@mkdir -p $(dir $@)
	$(call say,CC,$<)
	$(Q)$(CC) $(FINAL_CFLAGS) -Itests/unit -o $@ $< $(B)/libhopbench.a $(FINAL_LDFLAGS) -lcmocka $(LIBS)

# A fuzz target linked with the plain replay driver: `make test` runs the seed corpus.
$(B)/fuzz/replay_%: fuzz/fuzz_%.c fuzz/replay.c fuzz/server_drive.h fuzz/session_drive.h fuzz/feed_drive.h $(B)/libhopbench.a $(B)/.flags
	@mkdir -p $(dir $@)
	$(call say,CC,$<)
	$(Q)$(CC) $(FINAL_CFLAGS) -o $@ $< fuzz/replay.c $(B)/libhopbench.a $(FINAL_LDFLAGS) $(LIBS)

# Helpers the integration tests start (a misbehaving server); not installed.
$(B)/tools/%: tests/tools/%.c $(B)/.flags
	@mkdir -p $(dir $@)
	$(call say,CC,$<)
	$(Q)$(CC) $(FINAL_CFLAGS) -o $@ $< $(FINAL_LDFLAGS)

$(B)/bench/floor: bench/floor.c bench/bench.h $(B)/.flags
	@mkdir -p $(dir $@)
	$(call say,CC,$<)
	$(Q)$(CC) $(FINAL_CFLAGS) -o $@ $< $(FINAL_LDFLAGS)

$(B)/bench/protofloor: bench/protofloor.c bench/bench.h $(B)/.flags
	@mkdir -p $(dir $@)
	$(call say,CC,$<)
	$(Q)$(CC) $(FINAL_CFLAGS) -o $@ $< $(FINAL_LDFLAGS) -luring

# A static hopbench (the release objects, linked with -static) for images on an empty base.
# The linker's warnings (kept in build/static/hopbench.ld) are glibc's about libcrypto's own
# dlopen and getaddrinfo, parts of libcrypto hopbench never calls: it only hashes and
# encrypts. The stacks read /etc/passwd and /etc/group themselves (src/stack/users.c).
build/static/hopbench: $(MAIN_OBJ) $(B)/libhopbench.a
	@mkdir -p $(dir $@)
	$(call say,LINK,$@)
	$(Q)$(CC) -static $(FINAL_LDFLAGS) -o $@ $^ $(LIBS) 2>$@.ld || { cat $@.ld; exit 1; }
static: build/static/hopbench

# The container image localhost/hopbench:VERSION, built locally from deploy/Containerfile
# (the static binary, an empty /tmp and /out on an empty base), never pulled; podman (Debian's,
# runc runtime) with CONTAINERS_CONF and PODMAN_FLAGS (e.g. --root DIR) from the
# environment. scripts/deps.sh image installs podman.
# Labelled and annotated (OCI, org.opencontainers.image.*) with the version, the commit it was
# built from and SOURCE_URL, where its source is (git's remote.origin.url when set).
IMAGE ?= localhost/hopbench:$(VERSION)
REVISION := $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
SOURCE_URL ?= $(or $(shell git config --get remote.origin.url 2>/dev/null),unknown)
OCI_META = $(foreach k,version=$(VERSION) revision=$(REVISION) source=$(SOURCE_URL) \
             title=hopbench,--label org.opencontainers.image.$(k) \
             --annotation org.opencontainers.image.$(k))
image: build/static/hopbench
	@$(DEPS) image
	@rm -rf build/image && mkdir -p build/image/fs/tmp build/image/out && chmod 1777 build/image/fs/tmp
	@cp build/static/hopbench build/image/hopbench
	podman $(PODMAN_FLAGS) build -q $(OCI_META) -f deploy/Containerfile -t $(IMAGE) build/image

# The stack image localhost/hopbench-stack:VERSION for deploy/k8s/stack-*.yaml: a Debian 12
# root file system made by debootstrap (minbase with nginx and php8.2-fpm, from DEBIAN_MIRROR;
# no documentation, locales or package lists), kept as STACK_DIR/rootfs.tar and made only when
# that file is missing, then imported into podman. As root: debootstrap needs it.
STACK_IMAGE ?= localhost/hopbench-stack:$(VERSION)
STACK_DIR ?= build/stack
DEBIAN_MIRROR ?= http://deb.debian.org/debian
$(STACK_DIR)/rootfs.tar:
	@$(DEPS) image
	@! grep -q ' $(abspath $(STACK_DIR))/rootfs/' /proc/mounts || \
	  { echo "image-stack: something is mounted under $(STACK_DIR)/rootfs (an interrupted debootstrap?): unmount it first" >&2; exit 1; }
	@rm -rf $(STACK_DIR)/rootfs && mkdir -p $(STACK_DIR)
	debootstrap --variant=minbase --include=nginx,php8.2-fpm bookworm $(STACK_DIR)/rootfs \
	  $(DEBIAN_MIRROR) >$(STACK_DIR)/debootstrap.log 2>&1 || { tail -n 5 $(STACK_DIR)/debootstrap.log; exit 1; }
	@cd $(STACK_DIR)/rootfs && rm -rf var/cache/apt/archives/*.deb var/lib/apt/lists/* \
	  usr/share/doc usr/share/man usr/share/locale
	@tar -C $(STACK_DIR)/rootfs -cf $@.tmp . && mv $@.tmp $@ && rm -rf $(STACK_DIR)/rootfs
image-stack: $(STACK_DIR)/rootfs.tar
	podman $(PODMAN_FLAGS) import -q --change 'ENV=PATH=/usr/sbin:/usr/bin:/sbin:/bin' $< $(STACK_IMAGE)

# The release: DIST_DIR/hopbench-VERSION-linux-ARCH.tar.gz (DIST_DIR: build/dist), a tree that installs as it is
# into any root (bin/hopbench static, share/man/man1, share/bash-completion, share/doc with
# README, docs and deploy), with SHA256SUMS over its files inside and
# hopbench-VERSION-linux-ARCH.tar.gz.sha256 beside it; then the image with `make image`
# (IMAGE, its OCI labels). DIST_IMAGE=no leaves the image out.
DIST_NAME := hopbench-$(VERSION)-linux-$(shell uname -m)
DIST_DIR ?= build/dist
DIST_IMAGE ?= yes
dist: build/static/hopbench
	@rm -rf $(DIST_DIR)/$(DIST_NAME) $(DIST_DIR)/$(DIST_NAME).tar.gz*
	@$(MAKE) --no-print-directory install-files BIN=build/static/hopbench \
	  DESTDIR=$(DIST_DIR)/$(DIST_NAME) PREFIX=
	@d=$(DIST_DIR)/$(DIST_NAME)/share/doc/hopbench && mkdir -p $$d && \
	  cp -r README.md docs deploy $$d/ && rm -f $$d/docs/hopbench.1
	@cd $(DIST_DIR)/$(DIST_NAME) && find . -type f ! -name SHA256SUMS | LC_ALL=C sort | \
	  sed 's|^\./||' | xargs sha256sum >SHA256SUMS
	@tar -C $(DIST_DIR) --owner=0 --group=0 --numeric-owner --sort=name \
	  -czf $(DIST_DIR)/$(DIST_NAME).tar.gz $(DIST_NAME)
	@cd $(DIST_DIR) && sha256sum $(DIST_NAME).tar.gz >$(DIST_NAME).tar.gz.sha256
	@echo "dist: $(DIST_DIR)/$(DIST_NAME).tar.gz"
	@[ "$(DIST_IMAGE)" = no ] || $(MAKE) --no-print-directory image

# make -s print-VAR: a variable's value (VERSION, REVISION, SOURCE_URL), for the tests.
print-%:
	@echo $($*)

lab: hopbench
	./hopbench lab

unit: $(UNIT_BIN) $(B)/hopbench | test-deps
integration: $(B)/hopbench $(TOOL_BIN) $(FLOOR_BIN) | test-deps

# The whole suite: unit tests, then integration tests that start servers on
# loopback and Unix sockets and stop them by PID. Prints "N passed, N failed".
# INTEG="test_a test_b" runs only those integration scripts.
test: $(UNIT_BIN) $(REPLAY_BIN) $(TOOL_BIN) $(FLOOR_BIN) $(B)/hopbench | test-deps
	@INTEG='$(INTEG)' sh tests/run.sh $(B)

# Everything built (the test tools too, so that no warning hides), then the unit tests
# and the fuzz corpora only: CI's clang stage.
test-unit: $(UNIT_BIN) $(REPLAY_BIN) $(TOOL_BIN) $(BENCH_BIN) $(B)/hopbench | test-deps
	@sh tests/run.sh $(B) unit

# libFuzzer (clang) over each codec, FUZZ_SECONDS each, starting from a copy of
# the seed corpus so found inputs stay in build/ (add the useful ones by hand). Each target
# is built with the codecs and the sources its own line "/* fuzz: also FILES */" names.
fuzz: | deps
	@$(DEPS) fuzz
	@mkdir -p build/fuzz
	@set -e; for t in $(FUZZ_NAMES); do \
	  extra=$$(sed -n 's|^/\* fuzz: also \(.*\) \*/$$|\1|p' fuzz/fuzz_$$t.c); \
	  clang -std=c11 -D_GNU_SOURCE -Isrc -g -O2 -fsanitize=fuzzer,address,undefined \
	    -fsanitize-coverage-ignorelist=fuzz/coverage_ignore.txt \
	    -fno-sanitize-recover=all -o build/fuzz/fuzz_$$t fuzz/fuzz_$$t.c $(PROTO_SRC) $$extra -ljansson -lcrypto; \
	  rm -rf build/fuzz/corpus-$$t && cp -r fuzz/corpus/$$t build/fuzz/corpus-$$t; \
	  echo "  FUZZ   $$t ($(FUZZ_SECONDS) s)"; \
	  build/fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
	    build/fuzz/corpus-$$t 2>build/fuzz/$$t.log || { tail -40 build/fuzz/$$t.log; exit 1; }; \
	  grep -E 'stat::number_of_executed_units' build/fuzz/$$t.log; \
	done

# ThreadSanitizer looks for races between threads: the unit tests and the integration scripts
# whose hopbench runs load, sampler, server, agent or signal threads against each other. The
# rest (stacks, reports, compare, images) run the same threads as these under a slower harness.
TSAN_INTEG ?= test_run test_lab test_serve test_serve_limits test_uring test_agent \
              test_invariants test_open test_open_tail test_progress test_reps test_pin \
              test_services test_retry test_connect_timeout test_limits test_noisy test_profile \
              test_placement
asan:
	$(Q)$(MAKE) --no-print-directory FLAVOUR=asan test
tsan:
	$(Q)$(MAKE) --no-print-directory FLAVOUR=tsan test INTEG='$(TSAN_INTEG)'

bench: hopbench $(BENCH_BIN)
	@$(DEPS) bench
	@sh bench/pingpong.sh ./hopbench $(FLOOR_BIN)
	@sh bench/peers.sh ./hopbench
	@sh bench/cpu_crosscheck.sh ./hopbench 10
	@sh bench/sampler.sh ./hopbench

FORMAT_FILES := $(wildcard src/*.[ch] src/*/*.[ch] tests/unit/*.[ch] tests/tools/*.c bench/*.[ch] fuzz/*.[ch])
format: | lint-deps
	clang-format -i $(FORMAT_FILES)
format-check: | lint-deps
	clang-format --dry-run --Werror $(FORMAT_FILES)

# cppcheck: missingIncludeSystem is noise (system headers are not given to it).
# clang-tidy: the checks and the reasons for the disabled ones are in .clang-tidy.
# include-cycles.sh: no module of src/ includes, through others, one that includes it.
lint: | lint-deps
	sh scripts/include-cycles.sh
	cppcheck --quiet --error-exitcode=1 --enable=warning,portability --inline-suppr \
	  --suppress=missingIncludeSystem -D_GNU_SOURCE -Isrc src
	clang-tidy --quiet $(LIB_SRC) src/main.c -- $(filter-out -MMD -MP,$(BASE_CFLAGS))

# The binary, its manual page (with this build's version) and its bash completion.
BIN ?= hopbench
install: hopbench
	@$(MAKE) --no-print-directory install-files
install-files:
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
	  $(DESTDIR)$(PREFIX)/share/bash-completion/completions
	install -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/hopbench
	sed 's/@VERSION@/$(VERSION)/' docs/hopbench.1 >$(DESTDIR)$(PREFIX)/share/man/man1/hopbench.1
	chmod 0644 $(DESTDIR)$(PREFIX)/share/man/man1/hopbench.1
	install -m 0644 scripts/hopbench.bash-completion \
	  $(DESTDIR)$(PREFIX)/share/bash-completion/completions/hopbench

clean:
	rm -rf build hopbench

-include $(LIB_OBJ:.o=.d) $(MAIN_OBJ:.o=.d)
