// Command echonode is a test fixture of coup's end-to-end tests: a
// foreign node, written with the standard library alone, that serves
// Maelstrom's echo workload. With -bug stale, every fifth echo comes back
// with the payload of the echo before it.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"os"
)

func main() {
	stale := flag.String("bug", "", "misbehave on purpose: stale")
	flag.Parse()
	out := bufio.NewWriter(os.Stdout)
	send := func(src, dest string, body map[string]any) {
		b, _ := json.Marshal(map[string]any{"src": src, "dest": dest, "body": body})
		out.Write(b)
		out.WriteByte('\n')
		out.Flush()
	}
	self, count := "", 0
	var last any
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var m struct {
			Src  string         `json:"src"`
			Body map[string]any `json:"body"`
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			continue
		}
		switch m.Body["type"] {
		case "init":
			self, _ = m.Body["node_id"].(string)
			send(self, m.Src, map[string]any{"type": "init_ok", "in_reply_to": m.Body["msg_id"]})
		case "echo":
			count++
			echo := m.Body["echo"]
			if *stale == "stale" && count%5 == 0 && last != nil {
				echo = last
			}
			last = m.Body["echo"]
			send(self, m.Src, map[string]any{"type": "echo_ok", "in_reply_to": m.Body["msg_id"], "echo": echo})
		}
	}
}
