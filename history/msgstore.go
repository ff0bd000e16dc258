package history

import "unsafe"

// msgStore keeps the message events of a compact history: each in 48 bytes
// (an Event takes 320, and its strings more), its strings interned, and
// the rare fields of a corrupt event (body, detail) apart.
type msgStore struct {
	// chunks hold the records, chunkSize to a chunk, so that a store that
	// grows never copies what it holds.
	chunks [][]msgRec
	n      int
	strs   []string          // interned strings; 0 is ""
	ids    map[string]uint32 // string → its number in strs
	extra  map[int]msgExtra  // by position
	// recent caches ids by string address (see intern), made with the
	// first string interned: a history that keeps no message apart (the
	// simulator's) does not carry it.
	recent *[64]recentStr
}

type msgRec struct {
	index, time, msg int64
	// before is the number of non-message events (of History.Events)
	// that came before this one: where it goes when all are put in order.
	before                         int32
	what, src, dest, mtype, reason uint32
}

type msgExtra struct{ body, detail string }

type recentStr struct {
	p  *byte
	n  int
	id uint32
}

// maxInterned bounds the strings a store interns: a history with more
// distinct names than that keeps its further message events as plain
// events.
const maxInterned = 1 << 20

// add keeps e when it is a message event with no field a message event
// does not use, and reports whether it did.
func (s *msgStore) add(e *Event, before int) bool {
	if e.Kind != KindMsg || e.Node != "" || e.Value != "" || e.Name != "" || e.Incarnation != 0 ||
		e.Process != "" || e.Type != "" || e.F != "" || e.Phase != "" || e.Nodes != nil ||
		e.Meta != nil || e.Counts != nil || before > 1<<31-1 {
		return false
	}
	var ids [5]uint32
	for i, v := range [5]string{e.What, e.Src, e.Dest, e.MType, e.Reason} {
		id, ok := s.intern(v)
		if !ok {
			return false
		}
		ids[i] = id
	}
	if e.Body != "" || e.Detail != "" {
		if s.extra == nil {
			s.extra = map[int]msgExtra{}
		}
		s.extra[s.n] = msgExtra{body: e.Body, detail: e.Detail}
	}
	if s.n%chunkSize == 0 {
		s.chunks = append(s.chunks, make([]msgRec, 0, min(chunkSize, max(64, s.n))))
	}
	c := &s.chunks[len(s.chunks)-1]
	*c = append(*c, msgRec{index: e.Index, time: e.Time, msg: e.Msg, before: int32(before),
		what: ids[0], src: ids[1], dest: ids[2], mtype: ids[3], reason: ids[4]})
	s.n++
	return true
}

// chunkSize is the number of records in a full chunk.
const chunkSize = 1 << 16

// len is the number of message events kept.
func (s *msgStore) len() int { return s.n }

// rec is the j-th record.
func (s *msgStore) rec(j int) *msgRec { return &s.chunks[j/chunkSize][j%chunkSize] }

func (s *msgStore) intern(v string) (uint32, bool) {
	if v == "" {
		return 0, true
	}
	// The strings of a message event are mostly the very strings (the
	// same bytes) of the last events: a reader interns them, a recorder
	// is handed the router's. A small cache by address saves hashing.
	if s.recent == nil {
		s.recent = new([64]recentStr)
	}
	p := unsafe.StringData(v)
	slot := &s.recent[(uintptr(unsafe.Pointer(p))>>3)%uintptr(len(s.recent))]
	if slot.p == p && slot.n == len(v) {
		return slot.id, true
	}
	if id, ok := s.ids[v]; ok {
		*slot = recentStr{p: p, n: len(v), id: id}
		return id, true
	}
	if len(s.strs) >= maxInterned {
		return 0, false
	}
	if s.ids == nil {
		s.ids = map[string]uint32{}
		s.strs = []string{""}
	}
	id := uint32(len(s.strs))
	s.strs = append(s.strs, v)
	s.ids[v] = id
	return id, true
}

// event writes the j-th message event into e.
func (s *msgStore) event(j int, e *Event) {
	r := s.rec(j)
	x := s.extra[j]
	*e = Event{Index: r.index, Time: r.time, Kind: KindMsg, What: s.str(r.what), Msg: r.msg,
		Src: s.str(r.src), Dest: s.str(r.dest), MType: s.str(r.mtype), Reason: s.str(r.reason),
		Body: x.body, Detail: x.detail}
}

func (s *msgStore) str(id uint32) string {
	if id == 0 {
		return ""
	}
	return s.strs[id]
}
