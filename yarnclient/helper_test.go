package yarnclient_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/colocd/colocd/yarnclient"
)

// helperEnv switches the test binary into a fake "spark-submit": it reads the
// tags from COLOCD_YARN_TAGS, reserves an id and submits an app carrying them
// to the RM in HELPER_RM_URL, like a real submitter would.
const helperEnv = "YARNCLIENT_TEST_HELPER"

func runHelper() int {
	rmURL := os.Getenv("HELPER_RM_URL")
	tags := strings.Split(os.Getenv(yarnclient.DefaultTagEnv), ",")
	c, err := yarnclient.New(yarnclient.Config{RMURLs: []string{rmURL}, User: "spark"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	na, err := c.NewApplication(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	sub := yarnclient.SubmissionContext{ApplicationID: na.ApplicationID, ApplicationName: strings.Join(os.Args[1:], " "), ApplicationType: "SPARK"}
	sub.AddTags(tags...)
	if _, err := c.SubmitApp(ctx, sub); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 4
	}
	fmt.Printf("INFO Client: Submitted application %s\n", na.ApplicationID)
	return 0
}

// runDaemonHelper is the test binary as a daemon running one submit
// command (the script in HELPER_SCRIPT) until it is killed.
func runDaemonHelper() int {
	c, err := yarnclient.New(yarnclient.Config{RMURLs: []string{os.Getenv("HELPER_RM_URL")}, User: "spark"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	spec := yarnclient.CommandSpec{Argv: []string{os.Getenv("HELPER_SCRIPT")}, Env: []string{"OUT=" + os.Getenv("OUT")},
		JobID: "01J0DEATH", Kind: "wordcount", Timeout: time.Minute}
	out, err := c.SubmitCommand(context.Background(), spec, yarnclient.JobTags(spec.JobID, spec.Kind))
	fmt.Fprintf(os.Stderr, "the command ended: %v\n%s", err, out)
	return 0
}
