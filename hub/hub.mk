# A JupyterHub for a class on this machine (included by the Makefile). Run as root; see docs/teaching.md,
# "Run it for a class".
#   make hub                              JupyterHub on 127.0.0.1:8000 (HUB_IP=0.0.0.0 HUB_PORT=… to change)
#   make hub-roster ROSTER=students.txt   one account per name; prints a random password for each
#   make hub-password NAME=alice          a new password      make hub-reset NAME=alice   fresh notebooks
#   make hub-teacher NAME=bob             another admin       make hub-remove NAME=alice  no more login
#   make hub-list                         the roster          make hub-bench STUDENTS=10  load test
#   make hub-bench STUDENTS=10 FAULT=memory   the same while one student goes over the limits (memory|cpu|fork)
#   make hub-assignments                  the exercises as nbgrader assignments in the teacher's ~/course
#   make hub-grades GRADES=grades.csv     every student's scores (after autograding in the formgrader)
HUB_IP ?= 127.0.0.1
HUB_PORT ?= 8000
HUB_INTERNAL_PORT ?= 8081
HUB_PROXY_API_PORT ?= 8001
HUB_IDLE_TIMEOUT ?= 3600
HUB_KERNEL_THREADS ?= 1
HUB_MEM_LIMIT ?= 1.5G
HUB_CPU_LIMIT ?= 1
HUB_PIDS_LIMIT ?= 512
HUB_SSL_CERT ?=
HUB_SSL_KEY ?=
HUB_TEACHER ?= teacher
HUB_STATE ?= hub/state
HUB_HOME_BASE ?= /home
HUB_EXCHANGE ?= /srv/nbgrader/exchange
GRADES ?= grades.csv
STUDENTS ?= 3
HUB_STAMP := $(VENV)/.hub-installed
HUB_PROXY := hub/node_modules/.package-lock.json
HUB_NBGRADER_OFF := $(VENV)/.hub-nbgrader-off
HUB_ENV = HUB_IP='$(HUB_IP)' HUB_PORT='$(HUB_PORT)' HUB_INTERNAL_PORT='$(HUB_INTERNAL_PORT)' \
  HUB_PROXY_API_PORT='$(HUB_PROXY_API_PORT)' HUB_IDLE_TIMEOUT='$(HUB_IDLE_TIMEOUT)' HUB_SSL_CERT='$(HUB_SSL_CERT)' \
  HUB_KERNEL_THREADS='$(HUB_KERNEL_THREADS)' HUB_MEM_LIMIT='$(HUB_MEM_LIMIT)' HUB_CPU_LIMIT='$(HUB_CPU_LIMIT)' \
  HUB_PIDS_LIMIT='$(HUB_PIDS_LIMIT)' \
  HUB_SSL_KEY='$(HUB_SSL_KEY)' HUB_TEACHER='$(HUB_TEACHER)' HUB_STATE='$(abspath $(HUB_STATE))' \
  HUB_HOME_BASE='$(HUB_HOME_BASE)' HUB_VENV='$(abspath $(VENV))' HUB_EXCHANGE='$(HUB_EXCHANGE)'
need_name = @test -n '$(NAME)' || { echo "Say whose account: make $@ NAME=<name>" >&2; exit 2; }

.PHONY: hub hub-deps hub-roster hub-teacher hub-password hub-reset hub-remove hub-list hub-bench hub-assignments \
  hub-grades

# jupyterhub and the idle culler go into the course's venv (the students' servers run from it too).
$(HUB_STAMP): pyproject.toml $(STAMP)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check $(INDEX_ARGS) -e '.[test,site,hub]' 2>&1 \
	  | { grep -v 'is ignored: it is neither a file nor a directory' || true; }
	@touch $@

# nbgrader's extensions off in the venv (make lab, the browser tests); the hub's servers switch them on again
# (hub/homework.py). Also for a venv that got nbgrader before this rule existed.
$(HUB_NBGRADER_OFF): $(HUB_STAMP)
	@for e in formgrader validate_assignment assignment_list course_list; do \
	  $(BIN)/jupyter server extension disable --sys-prefix nbgrader.server_extensions.$$e >/dev/null 2>&1 || exit 1; done
	@$(BIN)/jupyter labextension disable --level=sys_prefix @jupyter/nbgrader >/dev/null 2>&1
	@touch $@

# configurable-http-proxy, pinned by hub/package-lock.json.
$(HUB_PROXY): hub/package.json hub/package-lock.json
	@command -v npm >/dev/null || { echo "npm is missing: the hub's proxy is installed with it. Install Node.js 20+" \
	  "and npm (Debian 13 / Ubuntu 24.04: apt-get install nodejs npm; Debian 12 ships Node 18: use NodeSource)." >&2; exit 2; }
	npm ci --prefix hub --no-audit --no-fund --loglevel=error
	@touch $@

hub-deps: $(HUB_STAMP) $(HUB_NBGRADER_OFF) $(HUB_PROXY)

hub: hub-deps
	@$(HUB_ENV) $(BIN)/python hub/launch.py

hub-roster: hub-deps
	@test -n '$(ROSTER)' || { echo "Give the class list: make hub-roster ROSTER=students.txt (one name per line)" >&2; exit 2; }
	@$(HUB_ENV) $(BIN)/python hub/roster.py add '$(ROSTER)'

hub-teacher hub-password hub-reset hub-remove: hub-deps
	$(need_name)
	@$(HUB_ENV) $(BIN)/python hub/roster.py $(patsubst hub-%,%,$@) '$(NAME)'

hub-list: hub-deps
	@$(HUB_ENV) $(BIN)/python hub/roster.py list

# The load test: STUDENTS simulated students on a separate hub with temporary accounts (removed at the end);
# FAULT=memory|cpu|fork: one of them allocates 20 GB, busies 4 cores or forks without end meanwhile.
hub-bench: hub-deps
	$(BIN)/python -m attnlib.bench hub --students $(STUDENTS) $(if $(FAULT),--fault $(FAULT))

# Homework (nbgrader): the assignments from the notebooks' exercises, then the scores as CSV.
hub-assignments: hub-deps
	@$(HUB_ENV) $(BIN)/python hub/homework.py assignments

hub-grades: hub-deps
	@$(HUB_ENV) $(BIN)/python hub/homework.py grades '$(abspath $(GRADES))'
