package slurmtest

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Job is one line of `scontrol show job`: a job, or one task of an
// array (a pending array's tasks not yet started share one line).
type Job struct {
	// ID is the job's id; Task, for an array's, its index ("1", or
	// "2-3" for tasks not yet started).
	ID, Task string
	// State is Slurm's JobState (PENDING, RUNNING, COMPLETED, FAILED,
	// CANCELLED…); ExitCode its code and signal ("1:0").
	State, ExitCode string
}

// Ended says whether the job is in a state it leaves no more.
func (j Job) Ended() bool {
	switch j.State {
	case "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE", "PREEMPTED":
		return true
	}
	return false
}

func (j Job) String() string {
	id := j.ID
	if j.Task != "" {
		id += "[" + j.Task + "]"
	}
	return fmt.Sprintf("%s %s exit %s", id, j.State, j.ExitCode)
}

var jobField = regexp.MustCompile(`(?:^|\s)(JobId|ArrayTaskId|JobState|ExitCode)=(\S+)`)

// Jobs is what scontrol says of job id: one Job a line, an array's
// tasks each.
func (c *Cluster) Jobs(id string) ([]Job, error) {
	out, err := c.Command("scontrol", "-o", "show", "job", id).CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("scontrol show job %s: %v: %s", id, err, out)
	}
	var jobs []Job
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var j Job
		for _, m := range jobField.FindAllStringSubmatch(line, -1) {
			switch m[1] {
			case "JobId":
				j.ID = m[2]
			case "ArrayTaskId":
				j.Task = m[2]
			case "JobState":
				j.State = m[2]
			case "ExitCode":
				j.ExitCode = m[2]
			}
		}
		if j.ID == "" || j.State == "" {
			return nil, fmt.Errorf("scontrol show job %s: a line without JobId or JobState: %s", id, line)
		}
		jobs = append(jobs, j)
	}
	return jobs, nil
}

// Wait polls the jobs ids until every one, and every task of each, has
// ended, and returns them; it fails the test after timeout, saying
// where each job was.
func (c *Cluster) Wait(timeout time.Duration, ids ...string) []Job {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var all []Job
		ended := true
		for _, id := range ids {
			jobs, err := c.Jobs(id)
			if err != nil {
				c.t.Fatal(err)
			}
			for _, j := range jobs {
				ended = ended && j.Ended()
			}
			all = append(all, jobs...)
		}
		if ended {
			return all
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("jobs %s not ended after %v: %v", strings.Join(ids, ", "), timeout, all)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
