# colocd build and test entry points.
#   make demo   run colocd on the embedded simulator (configs/demo.yaml)
#   make test   install test tools if missing, vet, verify the systemd unit,
#               check the packages, then every test with -race
#   make package  the .deb and .rpm (nfpm) into dist/
SHELL := /bin/bash
GO ?= go
TOOLS ?= $(or $(COLOCD_TOOLS),$(HOME)/.cache/colocd/tools)
PLUGIN := collector/telegrafplugin
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null)
export COLOCD_INFLUXD := $(TOOLS)/bin/influxd
export COLOCD_TELEGRAF := $(TOOLS)/bin/telegraf
# Integration tests fail (instead of skipping) when a tool is missing.
export COLOCD_REQUIRE_TOOLS := 1

.PHONY: all build test tools vet fmt-check verify-unit check-prometheus package check-package unit bench demo clean

all: build

LDFLAGS := -X main.version=$(VERSION) -X main.commit=$(COMMIT)

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/colocd ./cmd/colocd
	cd $(PLUGIN) && $(GO) build -o ../../bin/colocd-telegraf-yarn ./cmd/colocd-telegraf-yarn

tools:
	COLOCD_TOOLS=$(TOOLS) ./scripts/install-tools.sh

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet: fmt-check
	$(GO) vet ./...
	cd $(PLUGIN) && $(GO) vet ./...
	$(TOOLS)/bin/staticcheck ./...
	cd $(PLUGIN) && $(TOOLS)/bin/staticcheck ./...

# systemd-analyze verify fails when ExecStart's binary does not exist (here:
# /usr/bin/colocd), so it checks a copy of configs/colocd.service, in a
# temporary directory, whose ExecStart runs a colocd built there (the daemon
# only: the Telegraf plugin is not needed). It exits 0 after warning about a
# value it ignores, so any output fails too. systemd-analyze comes with
# Debian's systemd package (make tools installs it when root with apt-get);
# without it the check is skipped, saying so.
verify-unit:
	@if ! command -v systemd-analyze >/dev/null 2>&1; then \
	  echo "verify-unit: SKIPPED: systemd-analyze is not installed and make tools could not install it (Debian package systemd)"; \
	  exit 0; \
	fi; \
	tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	$(GO) build -o "$$tmp/colocd" ./cmd/colocd && \
	sed "s|^ExecStart=/usr/bin/colocd |ExecStart=$$tmp/colocd |" configs/colocd.service >"$$tmp/colocd.service" && \
	if ! grep -q "^ExecStart=$$tmp/colocd " "$$tmp/colocd.service"; then \
	  echo "verify-unit: configs/colocd.service has no ExecStart=/usr/bin/colocd line to point at the built colocd"; exit 1; \
	fi; \
	out=$$(systemd-analyze verify "$$tmp/colocd.service" 2>&1); rc=$$?; \
	if [ $$rc -ne 0 ] || [ -n "$$out" ]; then \
	  echo "$$out"; echo "verify-unit: systemd-analyze verify configs/colocd.service failed (status $$rc)"; exit 1; \
	fi; \
	echo "verify-unit: systemd-analyze verify configs/colocd.service: clean"

# The .deb and .rpm, built by nfpm from packaging/nfpm.yaml.
package:
	NFPM=$(TOOLS)/bin/nfpm ./scripts/package.sh dist

# lintian, the .deb installed into a scratch root, systemd-analyze verify
# and security on what it installed, the JVM drop-in, the .rpm's files
# (scripts/check-package.sh says each step).
check-package:
	NFPM=$(TOOLS)/bin/nfpm ./scripts/check-package.sh

# The alert rules: promtool checks them and runs their unit tests
# (configs/prometheus-rules.test.yml).
check-prometheus:
	$(TOOLS)/bin/promtool check rules configs/prometheus-rules.yml
	cd configs && $(TOOLS)/bin/promtool test rules prometheus-rules.test.yml

test: tools vet verify-unit check-prometheus check-package
	$(GO) test -race -count=1 -timeout 30m ./...
	cd $(PLUGIN) && $(GO) test -race -count=1 -timeout 10m ./...

# Short tests only, no tools needed.
unit:
	COLOCD_REQUIRE_TOOLS= $(GO) test -short -count=1 ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# The demo builds the daemon only (not the Telegraf plugin), listing each
# package as it compiles (-v: a cold build takes a minute or two), then
# runs it in the foreground; Ctrl-C stops it. COLOCD_LISTEN and
# COLOCD_SIM_SPEED override the port and the speed.
demo:
	@echo "==> building bin/colocd (a first build compiles its dependencies, listed below)"
	@$(GO) build -v -ldflags "$(LDFLAGS)" -o bin/colocd ./cmd/colocd
	@listen=$${COLOCD_LISTEN:-127.0.0.1:8080}; \
	echo "==> colocd on the simulated cluster at http://$$listen/?token=demo-admin ($${COLOCD_SIM_SPEED:-60}x real time; Ctrl-C stops it)"; \
	echo "    in another terminal: COLOCD_SERVER=http://$$listen ./scripts/demo-submit.sh"
	./bin/colocd serve --config configs/demo.yaml

clean:
	rm -rf bin dist
