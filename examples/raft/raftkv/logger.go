package raftkv

import (
	"fmt"

	"go.etcd.io/raft/v3"

	"github.com/coupharness/coup"
)

// logger is raft's logger writing to the node's log through its Env, so
// that raft does no I/O of its own: debug lines are dropped, the rest are
// prefixed with their level.
type logger struct{ env coup.Env }

var _ raft.Logger = logger{}

func (l logger) Debug(...any)          {}
func (l logger) Debugf(string, ...any) {}
func (l logger) Info(v ...any)         { l.env.Logf("raft: %s", fmt.Sprint(v...)) }
func (l logger) Infof(f string, v ...any) {
	l.env.Logf("raft: "+f, v...)
}
func (l logger) Warning(v ...any) { l.env.Logf("raft: warning: %s", fmt.Sprint(v...)) }
func (l logger) Warningf(f string, v ...any) {
	l.env.Logf("raft: warning: "+f, v...)
}
func (l logger) Error(v ...any) { l.env.Logf("raft: error: %s", fmt.Sprint(v...)) }
func (l logger) Errorf(f string, v ...any) {
	l.env.Logf("raft: error: "+f, v...)
}

// Fatal and Panic end the machine with a panic, which ends the node's
// incarnation in the simulator as in a real process.
func (l logger) Fatal(v ...any)            { panic(fmt.Sprint(v...)) }
func (l logger) Fatalf(f string, v ...any) { panic(fmt.Sprintf(f, v...)) }
func (l logger) Panic(v ...any)            { panic(fmt.Sprint(v...)) }
func (l logger) Panicf(f string, v ...any) { panic(fmt.Sprintf(f, v...)) }
