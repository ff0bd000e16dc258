package mutex

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/coupharness/coup/nodes"
)

// fakeEnv records what a Front does, as one line per call.
type fakeEnv struct{ log []string }

var _ nodes.Env = (*fakeEnv)(nil)

func (e *fakeEnv) Self() string                          { return "n1" }
func (e *fakeEnv) Nodes() []string                       { return []string{"n1"} }
func (e *fakeEnv) ElectionID(string) int                 { return 1 }
func (e *fakeEnv) Send(to string, m nodes.Msg)           { e.add("send %s %s", to, m.Type()) }
func (e *fakeEnv) SetTimer(name string, d time.Duration) { e.add("timer %s", name) }
func (e *fakeEnv) CancelTimer(name string)               { e.add("cancel %s", name) }
func (e *fakeEnv) Report(r nodes.Report)                 { e.add("report %s %s", r.What, r.Value) }
func (e *fakeEnv) Reply(r nodes.Request, v string)       { e.add("ok %d %s", r.ID, r.Op) }
func (e *fakeEnv) ReplyWith(r nodes.Request, f any)      { e.add("ok %d %s %v", r.ID, r.Op, f) }
func (e *fakeEnv) Fail(r nodes.Request, er nodes.Error) {
	e.add("fail %d %s definite=%v code=%d", r.ID, r.Op, er.Definite, er.Code)
}
func (e *fakeEnv) Rand() *rand.Rand       { return rand.New(rand.NewPCG(1, 2)) }
func (e *fakeEnv) Logf(string, ...any)    {}
func (e *fakeEnv) add(f string, a ...any) { e.log = append(e.log, fmt.Sprintf(f, a...)) }
func (e *fakeEnv) take() string           { s := strings.Join(e.log, "; "); e.log = nil; return s }
func req(id int, op, owner string) nodes.Request {
	return nodes.Request{Client: fmt.Sprintf("c%d", id), ID: id, Op: op, Value: owner}
}

// Each step hands the front a request (or, with op "enter", calls Enter)
// and states the action and the calls it must make.
func TestFrontProtocol(t *testing.T) {
	type step struct {
		id     int
		op     string
		owner  string
		action Action
		calls  string
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"acquire, enter, release", []step{
			{1, OpAcquire, "a", Want, ""},
			{0, "enter", "", None, "report cs enter; ok 1 acquire"},
			{2, OpRelease, "a", Leave, "report cs exit; ok 2 release"},
		}},
		{"a second acquire waits and wants nothing more", []step{
			{1, OpAcquire, "a", Want, ""},
			{2, OpAcquire, "b", None, ""},
			{0, "enter", "", None, "report cs enter; ok 1 acquire"},
			{3, OpAcquire, "c", None, ""},
			{4, OpRelease, "a", Leave, "report cs exit; ok 4 release"},
			{0, "enter", "", None, "report cs enter; ok 2 acquire"},
		}},
		{"a release by another owner is refused", []step{
			{1, OpAcquire, "a", Want, ""},
			{0, "enter", "", None, "report cs enter; ok 1 acquire"},
			{2, OpRelease, "b", None, "fail 2 release definite=true code=22"},
		}},
		{"a release withdraws its owner's oldest waiting acquire", []step{
			{1, OpAcquire, "a", Want, ""},
			{2, OpAcquire, "b", None, ""},
			{3, OpAcquire, "b", None, ""},
			{4, OpRelease, "b", None, "fail 2 acquire definite=true code=14; fail 4 release definite=true code=22"},
			{0, "enter", "", None, "report cs enter; ok 1 acquire"},
			{5, OpRelease, "a", Leave, "report cs exit; ok 5 release"},
			{0, "enter", "", None, "report cs enter; ok 3 acquire"},
		}},
		{"everything withdrawn: nobody to enter", []step{
			{1, OpAcquire, "a", Want, ""},
			{2, OpRelease, "a", None, "fail 1 acquire definite=true code=14; fail 2 release definite=true code=22"},
			{0, "enter", "", None, ""},
		}},
		{"the owner defaults to the client", []step{
			{1, OpAcquire, "", Want, ""},
			{0, "enter", "", None, "report cs enter; ok 1 acquire"},
			{2, OpRelease, "", None, "fail 2 release definite=true code=22"}, // c2 is not c1
		}},
		{"unknown operations are refused", []step{
			{1, "elect", "", None, "fail 1 elect definite=true code=10"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := &fakeEnv{}
			f := NewFront(env)
			for i, s := range tt.steps {
				var got Action
				if s.op == "enter" {
					entered := f.Enter()
					if entered != (s.calls != "") {
						t.Errorf("step %d: Enter() = %v", i, entered)
					}
				} else {
					got = f.Handle(req(s.id, s.op, s.owner))
				}
				if got != s.action {
					t.Errorf("step %d (%s %d): action %v, want %v", i, s.op, s.id, got, s.action)
				}
				if calls := env.take(); calls != s.calls {
					t.Errorf("step %d (%s %d): calls %q, want %q", i, s.op, s.id, calls, s.calls)
				}
			}
		})
	}
}

func TestEnterWhileInsidePanics(t *testing.T) {
	f := NewFront(&fakeEnv{})
	f.Handle(req(1, OpAcquire, "a"))
	f.Handle(req(2, OpAcquire, "b"))
	f.Enter()
	defer func() {
		if recover() == nil {
			t.Error("a second Enter while a is inside did not panic")
		}
	}()
	f.Enter()
}
