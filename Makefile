# stream-browser: every entry point a person or CI uses. `make demo` and `make test` set up
# everything they need (Debian chromium + xvfb, the venv, npm tools) on a fresh machine.

SHELL := /bin/bash
PY := .venv/bin/python
SB := .venv/bin/stream-browser
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
GEMINI_CLI_VERSION := 0.61.0
AUTOCONSENT_VERSION := 16.23.0
INSPECTOR2_VERSION := 2.12.0
CLAUDE_CODE_VERSION := 2.1.197
MCP_SDK_VERSION := 1.32.2
MCP_INSPECTOR_VERSION := 0.15.0
export PYTHONDONTWRITEBYTECODE := 1

.PHONY: help setup system venv tools tools-inspector2 tools-claude demo serve test check lint typecheck format bench bench-extract bench-answers \
        soak screens debug record update-recordings case chrome doctor constraints dist clean \
        image base-image image-test podman-ready knockout mutation kube-validate kube-test

help:
	@echo "make demo    set up and run a search + page read on a local broadcast Chrome (offline)"
	@echo "make test    set up and run the whole test suite"
	@echo "make serve   run the service that alone drives the broadcast Chrome (127.0.0.1:8765)"
	@echo "make dist    build the wheel and the sdist into dist/"
	@echo "make lint typecheck format bench bench-extract bench-answers soak debug record update-recordings"
	@echo "make knockout  switch each stream-safety defense off in turn: the tests that must notice do"
	@echo "make mutation  mutation testing of the pure modules (mutmut; CPU-heavy, minutes per module)"
	@echo "make kube-validate  deploy/kubernetes/ against Kubernetes' schemas (kubernetes-validate)"
	@echo "make kube-test      two broadcasts from deploy/kubernetes/ under podman kube play (minutes)"

setup: system venv tools

# Debian packages, only when missing (never `playwright install`: it needs the internet).
system:
	@missing=""; \
	command -v chromium >/dev/null || command -v google-chrome >/dev/null || missing="$$missing chromium"; \
	command -v Xvfb >/dev/null || missing="$$missing xvfb"; \
	dpkg -s fonts-noto-cjk >/dev/null 2>&1 || missing="$$missing fonts-noto-cjk"; \
	dpkg -s fonts-noto-color-emoji >/dev/null 2>&1 || missing="$$missing fonts-noto-color-emoji"; \
	command -v import >/dev/null || missing="$$missing imagemagick"; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing >/dev/null; \
	fi

venv: .venv/.installed
# constraints.txt pins every installed version (reproducible installs; ranges stay in
# pyproject.toml). Refresh it after changing dependencies: make constraints
.venv/.installed: pyproject.toml constraints.txt
	@test -x $(PY) || python3 -m venv .venv
	@$(PY) -m pip install -q --upgrade pip >/dev/null 2>&1 || true
	@$(PY) -m pip install -q -c constraints.txt -e '.[dev]' >.venv/install.log 2>&1 \
	  || { tail -n 30 .venv/install.log; echo "pip install failed: the whole log is .venv/install.log"; exit 1; }
	@$(PY) -c "import browser_core, search, gemini, playwright, trafilatura" && touch $@

# $(call npm_tool,PREFIX,PACKAGES,WHAT): PACKAGES into PREFIX, then the target's stamp; when
# npm is missing or fails, one warning that WHAT's tests will be skipped (setup goes on).
define npm_tool
	@if command -v npm >/dev/null; then \
	  npm install --silent --no-audit --no-fund --prefix $(1) $(2) >/dev/null 2>&1 \
	    && touch $@ || echo "warning: could not install $(3); its tests will be skipped"; \
	else echo "warning: npm not found; the tests of $(3) will be skipped"; fi
endef

# The real Gemini CLI for the compatibility test (skipped with a reason if npm is missing).
tools: .tools/.installed .tools/.mcp-installed .tools/.autoconsent-$(AUTOCONSENT_VERSION) \
  .tools/.inspector2-$(INSPECTOR2_VERSION) .tools/.claude-$(CLAUDE_CODE_VERSION)
.tools/.installed:
	$(call npm_tool,.tools,@google/gemini-cli@$(GEMINI_CLI_VERSION),the real Gemini CLI)
	@if command -v npm >/dev/null; then \
	  (cd bench && npm install --silent --no-audit --no-fund >/dev/null 2>&1) \
	    || echo "warning: could not install bench/node_modules; the bench smoke test skips the Node row"; fi

# The MCP clients hosts are built on (TypeScript SDK, Inspector CLI) for the client tests.
.tools/.mcp-installed:
	$(call npm_tool,.tools,@modelcontextprotocol/sdk@$(MCP_SDK_VERSION) @modelcontextprotocol/inspector@$(MCP_INSPECTOR_VERSION),the TypeScript MCP SDK and Inspector)

# Node 22 from npm and the Inspector 2.x on it (2.x needs Node 22), for its HTTP test: about
# 20 s and 300 MB in .tools/node22 on a fresh machine.
tools-inspector2: .tools/.inspector2-$(INSPECTOR2_VERSION)
.tools/.inspector2-$(INSPECTOR2_VERSION):
	$(call npm_tool,.tools/node22,node@22 @modelcontextprotocol/inspector@$(INSPECTOR2_VERSION),Node 22 and Inspector 2.x)

# Claude Code, whose `claude mcp add` line in docs/mcp.md its test runs (`mcp add` and
# `mcp list` need no login and no network): about 4 s and 235 MB in .tools/claude.
tools-claude: .tools/.claude-$(CLAUDE_CODE_VERSION)
.tools/.claude-$(CLAUDE_CODE_VERSION):
	$(call npm_tool,.tools/claude,@anthropic-ai/claude-code@$(CLAUDE_CODE_VERSION),Claude Code)

# DuckDuckGo's consent-banner rules, injected into the broadcast tab (browser_core/stage/_consent.py).
.tools/.autoconsent-$(AUTOCONSENT_VERSION):
	@if command -v npm >/dev/null; then \
	  npm install --silent --no-audit --no-fund --save-exact --prefix .tools \
	    @duckduckgo/autoconsent@$(AUTOCONSENT_VERSION) >/dev/null 2>&1 \
	    && touch $@ || echo "warning: could not install @duckduckgo/autoconsent; consent banners will stay on the broadcast screen"; \
	else echo "warning: npm not found; consent banners will stay on the broadcast screen (@duckduckgo/autoconsent not installed)"; fi

demo: setup
	@$(SB) demo $(ARGS)

# The service the brain calls (README "From the brain"); Ctrl-C or SIGTERM drains and stops it.
serve: setup
	@$(SB) serve $(ARGS)

# The suite on every core (pytest-xdist, the files in conftest's order: the slow ones first),
# then the tests marked `serial` (they measure time or memory, or hold a deadline to the
# second) with nothing else beside them, in two lanes (conftest's `xdist_group`s: the screen's
# pictures, and the deadlines, memory and object counts), each lane one test at a time: the
# parallel part's load would make them flake. pytest-playwright's sync tests (the
# console's, the rendered pages') run beside the first part in a process of their own (its
# event loop stays running after them and breaks any later `asyncio.run`); their report is
# printed after it (.venv/test-playwright.log: pytest-playwright empties test-results/ as
# each session starts; its own output goes to test-results/playwright).
PW_LOG := .venv/test-playwright.log
test: setup
	@$(PY) -m pytest -q -m "sync_playwright and not serial" \
	  --output test-results/playwright >$(PW_LOG) 2>&1 & pw=$$!; \
	$(PY) -m pytest -q -n auto --dist loadfile --no-loadscope-reorder -m "not serial and not sync_playwright"; \
	rc=$$?; wait $$pw; pwrc=$$?; \
	if [ $$pwrc -ne 0 ]; then cat $(PW_LOG); else tail -n 1 $(PW_LOG); fi; \
	[ $$rc -eq 0 ] && [ $$pwrc -eq 0 ]
	@$(PY) -m pytest -q -n 2 --dist loadgroup -m serial

# Every stream-safety and screen defense switched off in turn, with the tests that must then
# fail (minutes; not part of `make test`; docs/testing.md). ARGS="--only NAME" for one.
knockout: setup
	@$(PY) scripts/knockout.py $(ARGS)

# mutmut over the pure modules (the address policy, the envelope and its look-alike folding,
# the Google and YouTube parsers, the passage selection), one at a time under nice, with the
# tests that cover each; killed/total per module (docs/testing.md). ARGS="--only policy".
mutation: venv
	@$(PY) -c "import mutmut" 2>/dev/null || $(PY) -m pip install -q -c constraints.txt -e '.[dev,mutation]'
	@$(PY) scripts/mutation.py $(ARGS)

# Everything that is formatted is also linted and type-checked; CI runs `check` before tests.
SRC := browser_core gemini search tests bench scripts

check: lint typecheck

lint: venv
	@$(PY) -m ruff check $(SRC)
	@$(PY) -m ruff format --check $(SRC)

typecheck: venv
	@$(PY) -m mypy

format: venv
	@$(PY) -m ruff format $(SRC)
	@$(PY) -m ruff check --fix $(SRC)

# Developer tools (see README "Debugging and recordings" and "Performance").
debug: setup
	@$(SB) debug $(ARGS)

record: setup
	@test -n "$(NAME)" || { echo 'usage: make record ACTION=search ARG="query" NAME=my-case'; exit 2; }
	@$(SB) record $(or $(ACTION),search) "$(ARG)" --name "$(NAME)" $(RECORD_ARGS)

update-recordings: setup
	@$(PY) scripts/update_recordings.py

# A results page kept because its parse was suspect (`stream-browser cases list`) as a
# recording, with its expected.json from a replay (docs/google.md, "When Google changes its page").
case: setup
	@test -n "$(CASE)" -a -n "$(NAME)" || { echo 'usage: make case CASE=<name from stream-browser cases list> NAME=my-recording'; exit 2; }
	@$(SB) cases export "$(CASE)" --name "$(NAME)"
	@$(PY) scripts/update_recordings.py "$(NAME)"

# The packages and their headline figures: bench/README.md.
bench: setup
	@$(PY) -m bench.warm $(BENCH_ARGS)

# A PNG of the broadcast screen after each action (search, read, play, stop), offline from the
# recordings: SCREENS_DIR=folder (default test-results/screens), SCREENS_ARGS=--caption.
screens: setup
	@$(PY) -m bench.stage.screens --out $(or $(SCREENS_DIR),test-results/screens) $(SCREENS_ARGS)

# `make soak OPS=5000`: the long soak (minutes, not part of `make test`); its headline is the
# growth after the first thousand operations.
soak: setup
	@$(PY) -m bench.soak $(if $(OPS),--ops $(OPS)) $(SOAK_ARGS)

bench-extract: venv
	@nice $(PY) -m bench.extract $(FIXTURES) $(if $(READABILITY),--readability $(READABILITY)) \
	    $(if $(WCXB),--wcxb $(WCXB)) $(if $(HELD_OUT),--held-out $(HELD_OUT))

# Query-focused reads (issue 34): is the answer in what the brain gets, for the opening, plain
# BM25 and the new read, per language at 6,000 and 1,500 characters. ANSWERS=SQuAD-format
# files or folders (default tests/fixtures/answers); ANSWERS_ARGS=--service (a sample through
# `serve` on a real Chromium), --folds 5 (cross-validate the passage settings), --json FILE.
bench-answers: setup
	@$(PY) -m bench.answers $(ANSWERS) $(ANSWERS_ARGS)

chrome: setup
	@$(SB) chrome

doctor: venv
	@$(SB) doctor

constraints: venv
	@$(PY) -m pip freeze --exclude-editable | grep -v '^stream-browser' > constraints.txt

# The wheel and the sdist, built as an installer builds them (an isolated build environment,
# the wheel from the sdist); tests/test_dist.py installs such a wheel into a fresh venv.
dist: venv
	@rm -rf dist
	@$(PY) -m build --outdir dist . >.venv/dist.log 2>&1 \
	  || { tail -n 30 .venv/dist.log; echo "build failed: the whole log is .venv/dist.log"; exit 1; }
	@ls -1 dist/*

clean:
	rm -rf .venv .tools test-results build dist *.egg-info

# -- the container image (README "Container") --------------------------------------------------
# docker when its daemon answers, else podman (with --format docker, which keeps HEALTHCHECK).
# The build trusts this machine's CA bundle (a build secret, never in a layer), for proxies
# that intercept TLS; CA_BUNDLE= builds without one.
IMAGE ?= stream-browser
# The image's labels: pyproject's version (the build checks it against the installed package)
# and where its source is (the git remote, without any user or token in it; SOURCE_URL=...).
PKG_VERSION = $(shell sed -n 's/^version = "\(.*\)"$$/\1/p' pyproject.toml)
SOURCE_URL ?= $(shell git remote get-url origin 2>/dev/null \
  | sed -E 's,^[a-z+]+://[^/@]*@,https://,; s,^[^/@:]+@([^:/]+):,https://\1/,')
BASE_IMAGE ?= docker.io/library/debian:trixie-slim
CA_BUNDLE ?= $(wildcard /etc/ssl/certs/ca-certificates.crt)
ENGINE ?= $(shell if docker info >/dev/null 2>&1; then echo docker; \
                  elif command -v podman >/dev/null; then echo podman; fi)
NO_ENGINE := echo "no container engine: install docker or podman (apt-get install podman)"; exit 2

# podman as it runs here (ENVIRONMENT.md), for every target that runs an engine: podman and
# runc installed when no docker daemon answers and either is missing, and a containers.conf
# with the ulimits this machine allows and runc as the runtime, named by CONTAINERS_CONF
# (unless the environment names one already) in those targets' recipes and their children.
# Without it 9 of image-test's 14 checks failed with "error setting rlimit type 7".
PODMAN_CONF := .venv/podman/containers.conf
CONTAINER_TARGETS := image base-image image-test kube-test
$(CONTAINER_TARGETS): export CONTAINERS_CONF ?= $(abspath $(PODMAN_CONF))
$(CONTAINER_TARGETS): podman-ready
kube-test: ENGINE := podman

podman-ready:
	@if [ "$(ENGINE)" != docker ] && ! { command -v podman && command -v runc; } >/dev/null; then \
	  echo "installing podman and runc"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq podman runc >/dev/null; \
	fi
	@mkdir -p $(dir $(PODMAN_CONF)) && printf '%s\n' '[containers]' \
	  'default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]' '[engine]' 'runtime = "runc"' \
	  >$(PODMAN_CONF)

image:
	@engine="$(ENGINE)"; [ -n "$$engine" ] || { $(NO_ENGINE); }; \
	$$engine image inspect $(BASE_IMAGE) >/dev/null 2>&1 \
	  || echo "$(BASE_IMAGE) is not here: the build pulls it (no registry? run make base-image)"; \
	format=""; [ "$$engine" = podman ] && format="--format docker"; \
	secret=""; [ -n "$(CA_BUNDLE)" ] && secret="--secret id=ca_bundle,src=$(CA_BUNDLE)"; \
	[ "$$engine" = docker ] && export DOCKER_BUILDKIT=1; \
	$$engine build $$format $$secret --build-arg BASE_IMAGE=$(BASE_IMAGE) \
	  --build-arg VERSION=$(PKG_VERSION) --build-arg SOURCE_URL=$(SOURCE_URL) \
	  -f deploy/Dockerfile -t $(IMAGE) . \
	  && $$engine image inspect --format '$(IMAGE): {{.Size}} bytes' $(IMAGE)

# The base from Debian's own packages (debootstrap, this machine's apt mirror), for machines
# that reach no container registry.
base-image:
	@engine="$(ENGINE)"; [ -n "$$engine" ] || { $(NO_ENGINE); }; \
	command -v debootstrap >/dev/null || $(SUDO) apt-get install -y -qq debootstrap >/dev/null; \
	$(SUDO) deploy/base-image.sh "$$engine" $(BASE_IMAGE)

# Builds the image (seconds when nothing changed: every layer is cached) and runs it as its
# users do (minutes; not part of `make test`): see README. Testing a stale image ran today's
# tests against yesterday's code.
image-test: venv image
	@ENGINE="$(ENGINE)" IMAGE="$(IMAGE)" $(PY) -m pytest -q scripts/image_test.py $(ARGS)

# -- many broadcasts: Kubernetes (docs/deploy.md) ---------------------------------------------
# The manifests against Kubernetes' own schemas, strict: as written, as `kubectl kustomize`
# renders them (when kubectl is here) and as the Pods kube-test plays (seconds).
kube-validate: venv
	@$(PY) -c "import kubernetes_validate" 2>/dev/null \
	  || $(PY) -m pip install -q -c constraints.txt -e '.[dev,kube]' >.venv/install-kube.log 2>&1 \
	  || { tail -n 20 .venv/install-kube.log; echo "could not install kubernetes-validate"; exit 1; }
	@$(PY) scripts/kube_validate.py $(KUBE_VALIDATE_ARGS)

# Two replicas of deploy/kubernetes/statefulset.yaml as Pods under `podman kube play`
# (scripts/kube_pods.py makes them from the one pod template; podman runs no StatefulSet),
# each read through the stdlib client, told apart, its Chrome wedged and killed, then
# `podman kube down` (minutes; not part of `make test`). Installs podman and runc when
# missing and writes podman's containers.conf (podman-ready, as for image-test), builds the
# base and the image under nice when missing or stale (every layer is cached when nothing
# changed).
kube-test: venv kube-validate
	@mkdir -p .venv/kube; \
	podman image inspect $(BASE_IMAGE) >/dev/null 2>&1 || nice -n 10 $(MAKE) --no-print-directory base-image ENGINE=podman; \
	nice -n 10 $(MAKE) --no-print-directory image ENGINE=podman >.venv/kube/image.log 2>&1 \
	  || { tail -n 30 .venv/kube/image.log; echo "make image failed: .venv/kube/image.log"; exit 1; }; \
	tail -n 1 .venv/kube/image.log; \
	ENGINE=podman IMAGE="$(IMAGE)" $(PY) -m pytest -q -s scripts/kube_test.py $(ARGS)
