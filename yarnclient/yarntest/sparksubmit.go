package yarntest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// sparkSubmit is the body of SparkSubmit's script.
const sparkSubmit = `set -eu
printf '%s\n' "$@" > "$OUT/args"
env -0 > "$OUT/env"
pwd > "$OUT/pwd"
queue=default tags=
while [ $# -gt 0 ]; do
  case "$1" in
    --queue) queue=$2; shift 2 ;;
    --conf) case "$2" in spark.yarn.tags=*) tags=${2#spark.yarn.tags=} ;; esac; shift 2 ;;
    *) shift ;;
  esac
done
user=${HADOOP_USER_NAME:-colocd}
id=$(curl -sf -X POST "$RM_URL/ws/v1/cluster/apps/new-application?user.name=$user" | sed 's/.*"application-id":"\([^"]*\)".*/\1/')
tags=$(printf '%s' "$tags" | sed 's/,/","/g')
curl -sf -X POST -H 'Content-Type: application/json' "$RM_URL/ws/v1/cluster/apps?user.name=$user" \
  -d "{\"application-id\":\"$id\",\"application-name\":\"spark\",\"queue\":\"$queue\",\"application-type\":\"SPARK\",\"application-tags\":{\"tag\":[\"$tags\"]},\"am-container-spec\":{\"commands\":{\"command\":\"true\"}}}"
echo "Submitted application $id"
`

// SparkSubmit writes a fake spark-submit into a temporary directory and
// returns its path. It is a bash script, as Spark's launcher is (so it
// obeys BASH_ENV), that records its arguments (one a line), environment
// (NUL-separated) and working directory in the files args, env and pwd of
// $OUT, then submits an application to the RM at $RM_URL over REST as
// Hadoop's client does with simple auth: as $HADOOP_USER_NAME when set,
// else as colocd; in --queue's queue; with the tags of --conf
// spark.yarn.tags=<tags>. It skips the test where bash or curl is
// missing.
func SparkSubmit(tb testing.TB) string {
	tb.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		tb.Skip("no bash for the fake spark-submit")
	}
	if _, err := exec.LookPath("curl"); err != nil {
		tb.Skip("no curl for the fake spark-submit")
	}
	p := filepath.Join(tb.TempDir(), "spark-submit")
	if err := os.WriteFile(p, []byte("#!"+bash+"\n"+sparkSubmit), 0o755); err != nil {
		tb.Fatal(err)
	}
	return p
}
