package sim

import (
	"reflect"
	"testing"

	"github.com/coupharness/coup/history"
)

// The recorder writes a message event into a recycled slot that held one
// by setting a message event's fields only (recorder.msg): that is right
// only while every message event the simulator records sets no other
// field, and every event has a kind. Reflection sees every field, those
// added later too.
func TestMessageEventsAreBare(t *testing.T) {
	bare := map[string]bool{"Index": true, "Time": true, "Kind": true, "What": true, "Msg": true,
		"Src": true, "Dest": true, "MType": true, "Reason": true, "Body": true, "Detail": true}
	typ := reflect.TypeFor[history.Event]()
	for _, sc := range catalogue(t) {
		for seed := sc.Seed; seed < sc.Seed+2; seed++ {
			out, err := Simulate(sc, seed, Options{})
			if err != nil {
				t.Fatal(err)
			}
			for i := range out.History.Events {
				e := &out.History.Events[i]
				if e.Kind == "" {
					t.Fatalf("%s seed %d: event %d has no kind", sc.Name, seed, e.Index)
				}
				if e.Kind != history.KindMsg {
					continue
				}
				v := reflect.ValueOf(e).Elem()
				for f := range typ.NumField() {
					if name := typ.Field(f).Name; !bare[name] && !v.Field(f).IsZero() {
						t.Fatalf("%s seed %d: message event %d sets %s", sc.Name, seed, e.Index, name)
					}
				}
			}
			Recycle(out)
		}
	}
}
