package redact

import "strings"

// The vocabulary of shell verbs. A word after the program reaches a verb
// only when it is listed here for that program, so an argument can never
// slip into a verb however odd the command line.

func set(words string) map[string]bool {
	m := make(map[string]bool)
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// subcommands lists, per program family, the subcommands kept in the verb.
var subcommands = map[string]map[string]bool{
	"git": set(`add am annotate apply archive bisect blame branch bundle checkout cherry cherry-pick
		citool clean clone commit config count-objects describe diff difftool fetch filter-branch
		format-patch fsck gc grep gui help init instaweb log ls-files ls-remote ls-tree maintenance
		merge merge-base mergetool mv notes pull push range-diff rebase reflog remote repack replace
		request-pull reset restore rev-list rev-parse revert rm shortlog show show-branch show-ref
		sparse-checkout stash status submodule switch tag update-index update-ref var verify-commit
		whatchanged worktree cat-file check-ignore hash-object lfs flow credential sh-setup
		symbolic-ref for-each-ref name-rev cliff absorb`),
	"npm": set(`access adduser audit bugs cache ci completion config dedupe deprecate diff dist-tag docs
		doctor edit exec explain explore find-dupes fund help init install install-ci-test install-test
		link login logout ls list org outdated owner pack ping pkg prefix profile prune publish query
		rebuild repo restart root run run-script sbom search shrinkwrap star stars start stop team test
		token uninstall unpublish unstar update version view whoami i it cit add rm remove un up t tst
		x info show get set`),
	"pnpm": set(`add install i update up upgrade remove rm uninstall un link ln unlink import rebuild rb
		prune fetch install-test it patch patch-commit patch-remove audit list ls outdated why licenses
		run test t exec dlx create start publish pack deploy env setup config init root bin store server
		doctor recursive cache catalog self-update approve-builds ignored-builds`),
	"yarn": set(`add install remove upgrade up upgrade-interactive run test exec dlx info init link unlink
		list outdated pack publish why workspace workspaces global cache config set plugin version
		constraints dedupe npm node bin create audit licenses import login logout owner tag team
		unplug rebuild explain search stage patch patch-commit`),
	"bun": set(`run test x install i add remove rm update upgrade create init build link unlink pm
		outdated publish patch patch-commit repl exec audit info why`),
	"cargo": set(`build b check c test t run r clippy fmt doc new init add remove rm install uninstall
		update publish bench clean fetch tree metadata search login package vendor fix nextest llvm-cov
		tarpaulin audit deny expand watch generate-lockfile locate-project owner pkgid report rustc
		rustdoc verify-project version yank help insta machete outdated udeps make dist release
		binstall sort hack miri semver-checks leptos zigbuild ndk set-version upgrade`),
	"go": set(`build test run vet fmt mod get install generate env version clean doc list tool work bug
		fix telemetry help`),
	"uv": set(`run init add remove version sync lock export tree tool python pip venv build publish cache
		self help format`),
	"poetry": set(`about add build check config debug env export help init install list lock new publish
		remove run search self shell show source sync update version`),
	"pip": set(`install download uninstall freeze inspect list show check config search cache index
		wheel hash completion debug help`),
	"docker": set(`run build compose exec ps images pull push logs stop rm rmi start restart inspect tag
		login logout network volume system image container buildx context cp kill stats top version
		info save load commit create events port rename search update wait attach diff export history
		import pause unpause manifest trust plugin swarm service stack secret config node init scout
		builder sbom model desktop debug`),
	"docker-compose": set(`up down build ps logs exec run pull push restart stop start config rm kill
		ls cp create events images pause port top unpause version wait watch attach stats`),
	"kubectl": set(`get describe apply delete create logs exec port-forward rollout scale config edit patch
		label annotate expose run set top cp explain diff wait auth api-resources api-versions
		cluster-info version drain cordon uncordon taint proxy attach debug events kustomize replace
		autoscale certificate plugin completion options`),
	"gh": set(`pr issue repo run workflow release auth gist label secret variable cache codespace project
		ruleset extension ssh-key gpg-key config alias org attestation search api browse status
		completion help co agent-task copilot`),
	"glab": set(`mr issue repo ci pipeline release auth label variable schedule snippet cluster job api
		config alias check-update incident user changelog deploy-key ssh-key stack token duo`),
	"terraform": set(`init plan apply destroy validate fmt output state import show workspace providers
		refresh taint untaint graph console login logout version test get force-unlock`),
	"tofu": set(`init plan apply destroy validate fmt output state import show workspace providers
		refresh taint untaint graph console login logout version test get force-unlock`),
	"helm": set(`install upgrade uninstall list ls repo search pull push template lint package dependency
		status history rollback get show create test version env plugin registry verify`),
	"dotnet": set(`build test run restore publish pack new add remove clean watch format tool ef sln
		nuget list msbuild store vstest workload dev-certs user-secrets`),
	"swift": set(`build test run package repl`),
	"deno": set(`run test lint fmt check task compile install uninstall bench doc info eval cache
		serve upgrade publish add remove outdated init coverage jupyter`),
	"brew": set(`install uninstall reinstall upgrade update list info search services tap untap
		cleanup doctor outdated link unlink pin unpin bundle leaves deps uses`),
	"apt":      set(`install update upgrade remove purge autoremove search show list full-upgrade`),
	"apt-get":  set(`install update upgrade remove purge autoremove dist-upgrade clean source download`),
	"conda":    set(`install create activate deactivate env list run update remove info search clean config init`),
	"gem":      set(`install uninstall update list build push search sources`),
	"bundle":   set(`install update exec add check config outdated lock init`),
	"composer": set(`install require update remove dump-autoload run-script create-project validate show outdated`),
	"flutter":  set(`test build run pub analyze create clean doctor upgrade format`),
	"dart":     set(`test run pub analyze compile format fix create doc`),
	"mix":      set(`test compile format run deps.get ecto.migrate phx.server credo dialyzer`),
	"mise": set(`run r exec x install i use u tasks task trust watch w ls ls-remote upgrade up uninstall
		prune plugins outdated doctor env activate deactivate set unset where which latest link cache
		config settings self-update reshim generate implode completion version bin-paths backends
		registry search sync shell sh tool unuse lock fmt`),
	// beads, an issue tracker agents drive from the shell
	"bd": set(`create show ready list update close reopen dep sync init stats blocked prime onboard
		quickstart comments comment label delete doctor search status config info migrate compact
		import export daemon hooks epic duplicates merge rename-prefix restore version help`),
	"rustup": set(`update install default toolchain target component override show run self which doc`),
	"systemctl": set(`start stop restart reload status enable disable daemon-reload is-active is-enabled
		list-units list-unit-files cat show edit mask unmask kill`),
	"playwright":    set(`test install codegen show-report show-trace`),
	"cypress":       set(`run open install verify`),
	"golangci-lint": set(`run fmt linters config`),
	"ruff":          set(`check format rule`),
	"biome":         set(`check lint format ci`),
	"bazel":         set(`build test run query cquery clean info fetch coverage`),
	"zig":           set(`build test run fmt`),
	"sbt":           set(`test compile run clean package`),
	"stack":         set(`build test run exec install setup`),
	"cabal":         set(`build test run install update`),
	"ng":            set(`build test lint serve generate new add update e2e`),
	"vite":          set(`build preview serve dev optimize`),
	"next":          set(`build dev start lint`),
	"nuxt":          set(`build dev generate preview`),
	"turbo":         set(`run build test lint dev prune`),
	"nx":            set(`run run-many affected build test lint serve graph`),
	"coverage":      set(`run report html xml erase combine`),
	"aws": set(`s3 s3api ec2 ecs ecr eks iam sts lambda logs cloudformation cloudwatch cloudfront
		dynamodb rds route53 sns sqs ssm secretsmanager kms elbv2 elb autoscaling apigateway
		apigatewayv2 cognito-idp codebuild codepipeline codecommit codeartifact events kinesis
		firehose glue athena emr batch stepfunctions sagemaker bedrock bedrock-runtime organizations
		configure sso amplify appsync acm elasticache es opensearch efs backup ce budgets
		application-autoscaling deploy lightsail ses sesv2 redshift ram waf wafv2 xray`),
	"gcloud": set(`auth config compute container run functions app sql storage iam projects
		services builds artifacts logging pubsub secrets kms dns deploy dataflow dataproc
		bigtable spanner firestore scheduler tasks redis memcache ai ml components init info
		organizations billing monitoring workflows eventarc filestore network-connectivity
		beta alpha`),
	"az": set(`login logout account group vm aks acr webapp functionapp storage keyvault network
		sql cosmosdb monitor ad role deployment resource appservice containerapp staticwebapp
		devops pipelines repos boards bicep extension config provider identity postgres mysql
		redis servicebus eventhubs apim cognitiveservices ml upgrade version`),
}

// threeWords lists the families whose subcommand takes one more word of
// its own grammar: gh/glab "<noun> <verb>" and docker's management commands.
var threeWords = map[string]map[string]bool{
	"gh": set(`pr issue repo run workflow release auth gist label secret variable cache codespace
		project ruleset extension ssh-key gpg-key config alias org attestation search agent-task`),
	"glab": set(`mr issue repo ci pipeline release auth label variable schedule snippet cluster job
		config alias incident user changelog deploy-key ssh-key stack token`),
	"docker": set(`compose buildx image container network volume system context builder manifest plugin
		swarm service stack secret config node trust scout model`),
}

// thirdWords lists the words accepted in the third position.
var thirdWords = set(`create view list ls status checkout co merge close reopen comment diff edit ready
	review checks develop delete clone fork sync rename archive unarchive watch rerun cancel download
	upload run enable disable login logout refresh token set add remove rm install upgrade browse lock
	unlock pin unpin transfer prs issues repos commits code update approve revoke note subscribe
	unsubscribe trace retry lint get setup-git switch up down build ps logs exec pull push restart stop
	start config kill cp images events pause port top unpause version wait attach stats prune inspect
	bake use history save load tag import export info df connect disconnect leave init join deploy
	services scale rollback ca promote demote quickview recommendations cves sbom compare item-list
	field-list mark-template copy link unlink view-run`)

// argFlags lists, per family, the global options that take a separate value,
// so that the value is not taken for the subcommand.
var argFlags = map[string]map[string]bool{
	"git":       set(`-C -c --git-dir --work-tree --namespace --super-prefix --config-env --exec-path`),
	"npm":       set(`-w --workspace --prefix -C --loglevel --registry --userconfig --cache --tag --scope`),
	"pnpm":      set(`-C --dir -F --filter -w --workspace-dir --reporter --loglevel --config`),
	"yarn":      set(`--cwd --cache-folder --modules-folder --mutex --network-timeout --registry`),
	"bun":       set(`--cwd -c --config --env-file --filter -F --preload -r`),
	"cargo":     set(`-C --config -Z --manifest-path --color`),
	"go":        set(`-C`),
	"mise":      set(`-C --cd -E --env -j --jobs -P --profile --shell -t --tool`),
	"uv":        set(`--directory --project --cache-dir --config-file --color -p --python`),
	"poetry":    set(`-C --directory -P --project`),
	"pip":       set(`--python --log --proxy --retries --timeout --exists-action --cert --client-cert --cache-dir`),
	"docker":    set(`-H --host -c --context --config -l --log-level --tlscacert --tlscert --tlskey -f --file -p --project-name --profile --env-file --project-directory`),
	"kubectl":   set(`-n --namespace --context --cluster --user --kubeconfig -s --server --token --as --as-group -l --selector`),
	"gh":        set(`-R --repo -B --base -H --head -t --title -b --body -F --body-file -l --label -a --assignee -r --reviewer -m --milestone -p --project -L --limit -s --state -q --jq --json -S --search -A --author -T --template --hostname -X --method -f --field`),
	"glab":      set(`-R --repo -b --target-branch -s --source-branch -t --title -d --description -l --label -a --assignee -m --milestone -F --output`),
	"terraform": set(`-chdir`),
	"helm":      set(`-n --namespace --kube-context --kubeconfig`),
	"make":      set(`-C --directory -f --file --makefile -I --include-dir -o --old-file -W --what-if -j --jobs -l --load-average`),
	"mvn":       set(`-f --file -s --settings -P --activate-profiles -pl --projects -D -T --threads -rf --resume-from -gs -t`),
	"gradle":    set(`-p --project-dir -b --build-file -c --settings-file -g --gradle-user-home -I --init-script -x --exclude-task -D -P`),
	"python":    set(`-X -W -Q`),
	"dotnet":    set(`-c --configuration -f --framework -r --runtime -p --project -v --verbosity -o --output`),
	"aws":       set(`--profile --region --output --endpoint-url --query --color --ca-bundle --cli-read-timeout --cli-connect-timeout`),
	"gcloud":    set(`--project --account --configuration --format --region --zone --verbosity --impersonate-service-account --billing-project --flags-file`),
	"az":        set(`--subscription -o --output --query`),
}

// verifyKinds says what a verify command checks.
const (
	vTest  = "test"  // tests and linters
	vBuild = "build" // compilers, builds and type checks
)

// verifyPrograms are programs that are a verify command whatever their
// arguments. Linters count as tests (they judge the code), type checkers
// and compilers as builds (they compile it).
var verifyPrograms = map[string]string{}

func init() {
	for _, p := range strings.Fields(`pytest py.test jest vitest mocha ava karma jasmine tap phpunit pest
		rspec tox nox ctest bats eslint flake8 pylint staticcheck shellcheck hadolint rubocop stylelint
		markdownlint markdownlint-cli2 yamllint actionlint oxlint swiftlint ktlint detekt revive
		golint gotestsum ginkgo svelte-check standard xo knip cspell codespell vale semgrep bandit
		trivy tflint`) {
		verifyPrograms[p] = vTest
	}
	for _, p := range strings.Fields(`mypy pyright basedpyright pyre tsc vue-tsc webpack esbuild rollup
		tsup parcel ninja gcc g++ clang clang++ cc c++ rustc javac kotlinc swiftc scalac ghc nvcc
		msbuild xcodebuild cmake meson bazelisk`) {
		verifyPrograms[p] = vBuild
	}
}

// categories of non-verify programs.
var (
	httpPrograms  = set(`curl wget http https httpie xh curlie aria2c`)
	cloudPrograms = set(`aws gcloud gsutil bq az kubectl oc helm terraform tofu pulumi docker
		docker-compose podman kind minikube eksctl doctl flyctl fly vercel netlify heroku wrangler
		firebase kustomize skaffold k9s k3d gcloud.cmd sam cdk serverless ansible ansible-playbook`)
	fsPrograms = set(`ls cat cp mv rm mkdir rmdir find chmod chown chgrp touch head tail ln du df tree
		stat file realpath readlink basename dirname pwd cd wc less more tar zip unzip gzip gunzip
		bzip2 xz rsync scp fd rg grep egrep fgrep ag ack diff cmp md5sum sha256sum shasum truncate
		dir type copy del move ren mklink Get-ChildItem Get-Content Set-Content Copy-Item Move-Item
		Remove-Item New-Item Test-Path Get-Item Select-String`)
	vcsPrograms = set(`git gh glab hub`)
)

// trivialPrograms set up a command line rather than do its work; a list's
// verb is the first command that is not one of them.
var trivialPrograms = set(`cd pushd popd export source . set unset true false : shopt alias unalias
	ulimit umask trap declare typeset local readonly setopt eval wait builtin hash exit return let`)

// wrappers run the command that follows them.
var wrapperFlags = map[string]struct {
	arg, known map[string]bool
}{
	"sudo": {set(`-u --user -g --group -C --close-from -D --chdir -h --host -p --prompt -r --role
		-t --type -U --other-user -T --command-timeout`),
		set(`-E -H -n -S -b -k -K -P -A -B -N --preserve-env --set-home --non-interactive --stdin
		--background --reset-timestamp --remove-timestamp --preserve-groups --askpass --bell`)},
	"doas":    {set(`-u -C`), set(`-n -s`)},
	"env":     {set(`-u --unset -C --chdir`), set(`-i --ignore-environment -0 --null -v --debug -`)},
	"time":    {set(`-f --format -o --output`), set(`-p --portability -v --verbose -a --append -q --quiet`)},
	"nohup":   {nil, nil},
	"exec":    {set(`-a`), set(`-c -l`)},
	"command": {nil, set(`-p`)},
	"xargs": {set(`-I -n --max-args -P --max-procs -L --max-lines -d --delimiter -E --eof -s
		--max-chars -a --arg-file --process-slot-var`),
		set(`-0 --null -r --no-run-if-empty -t --verbose -p --interactive -x --exit -o --open-tty
		--show-limits -e -i`)},
	"timeout":    {set(`-s --signal -k --kill-after`), set(`--preserve-status --foreground -v --verbose`)},
	"gtimeout":   {set(`-s --signal -k --kill-after`), set(`--preserve-status --foreground -v --verbose`)},
	"nice":       {set(`-n --adjustment`), nil},
	"ionice":     {set(`-c --class -n --classdata -p --pid -P --pgid -u --uid`), set(`-t --ignore`)},
	"stdbuf":     {set(`-i --input -o --output -e --error`), nil},
	"unbuffer":   {nil, set(`-p`)},
	"caffeinate": {set(`-t -w`), set(`-d -i -m -s -u`)},
	"chronic":    {nil, set(`-e -v`)},
	"dotenv":     {set(`-e -f -v -c`), set(`-o --override`)},
}

// runners run a tool named by their first operand: the tool is the verb.
// The value maps the runner to its options that take a value; any other
// option not in its known set makes the runner itself the verb, because
// its value could otherwise be taken for the tool.
var runnerFlags = map[string]struct {
	arg, known map[string]bool
}{
	"npx": {set(`-p --package -c --call --registry --cache --userconfig`),
		set(`-y --yes --no --no-install --ignore-existing -q --quiet --prefer-offline --prefer-online --offline --silent`)},
	"bunx": {set(`-p --package`), set(`--bun -b --silent --verbose`)},
	"pnpx": {set(`-p --package`), set(`-y --yes --silent`)},
	"uvx": {set(`--from --with --with-editable --with-requirements -p --python --index --index-url
		--extra-index-url --constraints --overrides --cache-dir`),
		set(`--isolated -q --quiet -v --verbose --offline --no-cache --refresh -U --upgrade --native-tls
		--no-progress --preview`)},
	"uv run": {set(`--with --with-editable --with-requirements -p --python --extra --group --package
		--directory --project --env-file --index --index-url --extra-index-url --default-index
		--find-links -f --upgrade-package -P --reinstall-package --only-group --no-group
		--exclude-newer --prerelease --resolution --index-strategy --keyring-provider -C
		--config-setting --link-mode --cache-dir --color --config-file --allow-insecure-host`),
		set(`--frozen --locked --no-sync --isolated --active --no-project --all-extras --no-dev --dev
		--all-packages --only-dev --no-editable --exact --offline --no-cache -q --quiet -v --verbose
		--native-tls --no-progress --refresh -U --upgrade --no-config --preview --script -s --all-groups
		--no-env-file --compile-bytecode --no-build-isolation --reinstall`)},
	"uv tool run":     {set(`--from --with -p --python --index --index-url`), set(`--isolated -q --quiet`)},
	"poetry run":      {set(`-C --directory -P --project`), set(`-q --quiet -n --no-interaction -v --verbose --no-ansi`)},
	"pipenv run":      {nil, nil},
	"pdm run":         {set(`-p --project`), set(`-v -q -g --global`)},
	"rye run":         {nil, nil},
	"pipx run":        {set(`--spec --python --pip-args --index-url`), set(`--no-cache -q --quiet -v --verbose --system-site-packages`)},
	"bundle exec":     {set(`--gemfile`), set(`--keep-file-descriptors`)},
	"npm exec":        {set(`-p --package -c --call -w --workspace`), set(`-y --yes --no --ws --workspaces --include-workspace-root`)},
	"npm x":           {set(`-p --package -c --call`), set(`-y --yes --no`)},
	"pnpm exec":       {set(`-C --dir -F --filter`), set(`-r --recursive -c --shell-mode --parallel`)},
	"pnpm dlx":        {set(`-p --package`), set(`-s --silent -c --shell-mode`)},
	"yarn dlx":        {set(`-p --package`), set(`-q --quiet`)},
	"yarn exec":       {nil, nil},
	"bun x":           {set(`-p --package`), set(`--bun -b`)},
	"conda run":       {set(`-n --name -p --prefix --cwd`), set(`--no-capture-output --live-stream -v`)},
	"op run":          {set(`--env-file`), set(`--no-masking`)},
	"dotnet tool run": {nil, nil},
}

// pythonModules are modules that `python -m` runs as tools.
var pythonModules = set(`pytest unittest pip mypy black ruff flake8 pylint isort tox nox coverage
	pyright build twine py.test`)

// shellPrograms run a script given with -c.
var shellPrograms = set(`bash sh zsh dash ksh fish ash mksh busybox`)

// installSubs are package-manager subcommands that install.
var installSubs = set(`install i add ci it sync require get`)
