package daemon

// dataDirSpace reads data_dir's free bytes (statFree, per platform) and
// data_dir_reserve_bytes, for colocd_data_dir_free_bytes.
func dataDirSpace(cfg Config) func() (free, reserve uint64, ok bool) {
	dir, reserve := cfg.DataDir, uint64(max(cfg.DataDirReserveBytes, 0))
	return func() (uint64, uint64, bool) {
		free, err := statFree(dir)
		if err != nil {
			return 0, reserve, false
		}
		return free, reserve, true
	}
}
