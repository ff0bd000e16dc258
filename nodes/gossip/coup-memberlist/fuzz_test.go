package main

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"
	"time"
)

// FuzzPeerBody decodes any peer message as a node does and hands it to the
// transport: nothing a peer (or a corrupting nemesis) sends may panic it.
func FuzzPeerBody(f *testing.F) {
	f.Add([]byte(`{"type":"packet","data":"cGluZw=="}`))
	f.Add([]byte(`{"type":"open","conn":"e1-1","dialer":true}`))
	f.Add([]byte(`{"type":"data","conn":"e1-1","dialer":true,"seq":1,"data":"YWJj"}`))
	f.Add([]byte(`{"type":"close","conn":"e1-1","dialer":true,"seq":-7}`))
	f.Add([]byte(`{"type":"data","conn":"","seq":9223372036854775807}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		var b body
		if json.Unmarshal(raw, &b) != nil {
			return
		}
		tr := newTransport("n2", []string{"n1", "n2"}, "e2", func(string, body) {})
		tr.receive("n1", b)
		tr.receive("n3", b) // a peer the transport does not know
		_ = tr.Shutdown()
	})
}

// FuzzStreamPieces delivers a stream's pieces in any order, some twice:
// the accepting end reads exactly the bytes of pieces 1, 2, … in order, up
// to the first that never came, and then the end of the stream.
func FuzzStreamPieces(f *testing.F) {
	f.Add([]byte{1, 3, 'a', 'b', 'c', 2, 1, 'd'})
	f.Add([]byte{2, 1, 'x', 1, 1, 'y', 2, 1, 'x', 4, 0})
	f.Fuzz(func(t *testing.T, script []byte) {
		// The script is a list of pieces: a sequence number (1–8), a length
		// and that many bytes.
		pieces := map[int64][]byte{}
		tr := newTransport("n2", []string{"n1", "n2"}, "e2", func(string, body) {})
		for len(script) >= 2 {
			seq, n := int64(script[0]%8)+1, int(script[1])
			script = script[2:]
			n = min(n, len(script))
			data := append([]byte(nil), script[:n]...)
			script = script[n:]
			if _, dup := pieces[seq]; !dup {
				pieces[seq] = data
			}
			tr.receive("n1", body{Type: typeData, Conn: "s", Dialer: true, Seq: seq, Data: data})
		}
		var want []byte
		total := int64(0)
		for seq := int64(1); ; seq++ {
			p, ok := pieces[seq]
			if !ok {
				break
			}
			want = append(want, p...)
			total = seq
		}
		tr.receive("n1", body{Type: typeClose, Conn: "s", Dialer: true, Seq: total})
		if len(pieces) == 0 {
			return
		}
		var c *conn
		select {
		case s := <-tr.streams:
			c = s.(*conn)
		default:
			t.Fatal("no stream was accepted")
		}
		_ = c.SetReadDeadline(time.Now().Add(time.Second))
		got, err := io.ReadAll(c)
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("read %q, want %q", got, want)
		}
	})
}
