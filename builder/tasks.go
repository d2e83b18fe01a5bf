package builder

// tasks cuts the kept events into one task per user turn (source "turns").
// Events before the first user turn belong to task 1. A session without a
// user turn has no tasks block.
func tasks(kept []*node) []Task {
	var starts []int
	for _, n := range kept {
		if n.ev.Kind == "user" {
			starts = append(starts, n.seq)
		}
	}
	if len(starts) == 0 {
		return nil
	}
	starts[0] = 0
	out := make([]Task, len(starts))
	for k, s := range starts {
		end := len(kept) - 1
		if k+1 < len(starts) {
			end = starts[k+1] - 1
		}
		n := k + 1
		out[k] = Task{N: n, ID: "t" + itoa(n), Name: "Turn " + itoa(n), Source: "turns",
			StartSeq: s, EndSeq: end, StartT: kept[s].ev.T, EndT: kept[end].ev.T,
			FirstTurn: k, LastTurn: k}
		for i := s; i <= end; i++ {
			kept[i].ev.Task = n
		}
	}
	return out
}
