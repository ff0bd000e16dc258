package scenario

import (
	"strings"
	"testing"

	"github.com/coupharness/coup/nemesis"
)

const diskServer = `nodes = 3
duration = "4s"

[server]
preset = "etcd"
`

// A power failure and each disk mode read from the file into the
// nemesis's terms, and the layer is asked for.
func TestStorageFaultsParse(t *testing.T) {
	s, err := Parse("d.toml", diskServer+`
[[faults]]
kind = "crash"
disk = "torn"
target = ["n1", "n2"]
at = "1s"
for = "1s"

[[faults]]
kind = "disk"
mode = "corrupt"
files = "member/wal/*.wal"
bits = 2
target = "n3"
at = "1s"

[[faults]]
kind = "disk"
mode = "eio"
ops = "read"
target = "leader"
at = "2s"
for = "1s"

[[faults]]
kind = "disk"
mode = "slow"
delay = "20ms"
target = "all"
at = "1s"
`)
	if err != nil {
		t.Fatal(err)
	}
	fs := s.NemesisFaults()
	if fs[0].PowerFail != nemesis.Torn || fs[1].DiskMode != nemesis.DiskCorrupt || fs[1].Bits != 2 || fs[1].Files != "member/wal/*.wal" ||
		fs[2].DiskMode != nemesis.DiskEIO || fs[2].Ops != "read" || fs[3].Delay.Milliseconds() != 20 {
		t.Errorf("faults read as %+v", fs)
	}
	if !s.StorageLayer() {
		t.Error("a scenario with a power failure does not ask for the storage layer")
	}
	plain, err := Parse("p.toml", diskServer)
	if err != nil {
		t.Fatal(err)
	}
	if plain.StorageLayer() {
		t.Error("a scenario with no storage fault asks for the storage layer")
	}
	asked, err := Parse("a.toml", strings.Replace(diskServer, `preset = "etcd"`, "preset = \"etcd\"\ndisk = \"fuse\"", 1))
	if err != nil {
		t.Fatal(err)
	}
	if !asked.StorageLayer() {
		t.Error(`[server] disk = "fuse" does not ask for the storage layer`)
	}
}

// Bad storage faults are refused at their line and column, naming the
// key.
func TestStorageFaultErrors(t *testing.T) {
	for _, c := range []struct {
		name, src, want string
	}{
		{"unknown power failure", diskServer + "[[faults]]\nkind = \"crash\"\ndisk = \"lose\"\ntarget = \"n1\"\n",
			`faults[0].disk: unknown power failure "lose"`},
		{"disk on a pause", diskServer + "[[faults]]\nkind = \"pause\"\ndisk = \"torn\"\ntarget = \"n1\"\n",
			"faults[0].disk: not a parameter of a pause fault"},
		{"no mode", diskServer + "[[faults]]\nkind = \"disk\"\ntarget = \"n1\"\n", "faults[0].mode: missing"},
		{"unknown mode", diskServer + "[[faults]]\nkind = \"disk\"\nmode = \"ful\"\ntarget = \"n1\"\n", `unknown disk mode "ful"`},
		{"corrupt needs one way", diskServer + "[[faults]]\nkind = \"disk\"\nmode = \"corrupt\"\ntarget = \"n1\"\n", "exactly one of bits"},
		{"corrupt two ways", diskServer + "[[faults]]\nkind = \"disk\"\nmode = \"corrupt\"\nbits = 1\nzero = 5\ntarget = \"n1\"\n", "exactly one of bits"},
		{"corrupt lasts", diskServer + "[[faults]]\nkind = \"disk\"\nmode = \"corrupt\"\nbits = 1\nfor = \"1s\"\ntarget = \"n1\"\n", "faults[0].for"},
		{"slow without delay", diskServer + "[[faults]]\nkind = \"disk\"\nmode = \"slow\"\ntarget = \"n1\"\n", "faults[0].delay"},
		{"bits on full", diskServer + "[[faults]]\nkind = \"disk\"\nmode = \"full\"\nbits = 3\ntarget = \"n1\"\n", `faults[0].bits: a parameter of mode = "corrupt"`},
		{"bad glob", diskServer + "[[faults]]\nkind = \"disk\"\nmode = \"eio\"\nfiles = \"[\"\ntarget = \"n1\"\n", "faults[0].files: bad glob"},
		{"unknown ops", diskServer + "[[faults]]\nkind = \"disk\"\nmode = \"eio\"\nops = \"rw\"\ntarget = \"n1\"\n", "faults[0].ops"},
		{"direct disk", strings.Replace(diskServer, `preset = "etcd"`, "preset = \"etcd\"\ndisk = \"direct\"", 1) +
			"[[faults]]\nkind = \"crash\"\ndisk = \"torn\"\ntarget = \"n1\"\n", `disk = "direct" keeps them plain`},
		{"unknown names", strings.Replace(diskServer, `preset = "etcd"`, "preset = \"etcd\"\ndisk_names = \"ext4\"", 1), `server.disk_names: unknown model "ext4"`},
		{"unknown server disk", strings.Replace(diskServer, `preset = "etcd"`, "preset = \"etcd\"\ndisk = \"fues\"", 1), `server.disk: unknown disk "fues"`},
		{"no disk to fail", "nodes = 3\nalgorithm = \"bully\"\n[[faults]]\nkind = \"crash\"\ndisk = \"torn\"\ntarget = \"n1\"\n",
			"needs a disk that knows what was synced"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("bad.toml", c.src)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one saying %q", err, c.want)
			}
			if !strings.HasPrefix(err.Error(), "bad.toml:") {
				t.Errorf("error %q does not name the file, line and column", err)
			}
		})
	}
}
