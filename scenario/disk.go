package scenario

// How a real server's data folder is kept ([server] disk).
const (
	// DiskFUSE mounts each node's data folder through coup's storage
	// layer, which knows what each file has synced.
	DiskFUSE = "fuse"
	// DiskDirect keeps it a plain folder of the store.
	DiskDirect = "direct"
)

// When the layer makes directory entries durable ([server] disk_names).
const (
	DiskNamesJournal = "journal"
	DiskNamesPOSIX   = "posix"
)

// StorageLayer reports whether the run mounts each real server's data
// folder through coup's storage layer: [server] disk = "fuse", or, with
// disk left out, a fault that needs it (a power failure, a disk fault).
func (s *Scenario) StorageLayer() bool {
	if s.Server == nil || s.Server.Disk == DiskDirect {
		return false
	}
	if s.Server.Disk == DiskFUSE {
		return true
	}
	for i := range s.nemesis {
		if s.nemesis[i].OnDisk() {
			return true
		}
	}
	return false
}

// StorageFaults reports whether any fault of the scenario acts on a
// disk.
func (s *Scenario) StorageFaults() bool {
	for i := range s.nemesis {
		if s.nemesis[i].OnDisk() {
			return true
		}
	}
	return false
}
