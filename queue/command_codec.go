package queue

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
)

// The log's wire form of an Entry: JSON, one object per command tagged
// with its type, so that a replica of another build can read it and an
// operator can read it with jq. A learned model's rows travel in the
// store's own binary row form (base64 in the JSON), which keeps every
// float64 bit for bit (JSON has no NaN).

// entryFormat is the version of the wire form this build writes and reads.
const entryFormat = 1

// errEntry: bytes that are not an Entry of this format (the error says
// what is wrong with them).
var errEntry = errors.New("queue: malformed log entry")

type wireEntry struct {
	Format   int       `json:"format"`
	Index    uint64    `json:"index"`
	Epoch    uint64    `json:"epoch,omitempty"`
	Commands []wireCmd `json:"commands"`
}

type wireCmd struct {
	Type string          `json:"type"`
	Body json.RawMessage `json:"body"`
}

// wireLearnedSave is a LearnedSave on the wire.
type wireLearnedSave struct {
	Section Section         `json:"section"`
	Full    bool            `json:"full,omitempty"`
	Names   []string        `json:"names"`
	Meta    json.RawMessage `json:"meta,omitempty"`
	Dense   []byte          `json:"dense,omitempty"` // appendFloats
	Rows    [][]byte        `json:"rows,omitempty"`  // uint32 BE index, then appendLearnedRow
}

type wireMigrate struct {
	Save   wireLearnedSave `json:"save"`
	Legacy []byte          `json:"legacy,omitempty"`
}

// commandTypes names every command on the wire; decoders make a fresh
// value of each.
var commandTypes = map[string]func([]byte) (Command, error){
	"submit":             decodeAs[CmdSubmit],
	"admit":              decodeAs[cmdAdmit],
	"requeue":            decodeAs[cmdRequeue],
	"start":              decodeAs[cmdStart],
	"finish":             decodeAs[cmdFinish],
	"cancel":             decodeAs[cmdCancel],
	"park":               decodeAs[cmdPark],
	"resolve":            decodeAs[cmdResolve],
	"compact":            decodeAs[cmdCompact],
	"save_fairness":      decodeAs[cmdSaveFairness],
	"quarantine_learned": decodeAs[cmdQuarantineLearned],
	"save_legacy":        decodeAs[cmdSaveLegacy],
	"save_learned":       decodeSaveLearned,
	"migrate_learned":    decodeMigrate,
}

func commandType(c Command) (string, error) {
	switch c.(type) {
	case CmdSubmit:
		return "submit", nil
	case cmdAdmit:
		return "admit", nil
	case cmdRequeue:
		return "requeue", nil
	case cmdStart:
		return "start", nil
	case cmdFinish:
		return "finish", nil
	case cmdCancel:
		return "cancel", nil
	case cmdPark:
		return "park", nil
	case cmdResolve:
		return "resolve", nil
	case cmdCompact:
		return "compact", nil
	case cmdSaveFairness:
		return "save_fairness", nil
	case cmdQuarantineLearned:
		return "quarantine_learned", nil
	case cmdSaveLegacy:
		return "save_legacy", nil
	case cmdSaveLearned:
		return "save_learned", nil
	case cmdMigrateLearned:
		return "migrate_learned", nil
	}
	return "", fmt.Errorf("queue: encode command: unknown type %T", c)
}

// EncodeEntry writes e in the log's wire form.
func EncodeEntry(e Entry) ([]byte, error) {
	w := wireEntry{Format: entryFormat, Index: e.Index, Epoch: e.Epoch, Commands: make([]wireCmd, len(e.Commands))}
	for i, c := range e.Commands {
		t, err := commandType(c)
		if err != nil {
			return nil, err
		}
		var body any = c
		switch c := c.(type) {
		case cmdSaveLearned:
			saves := make([]wireLearnedSave, len(c.Saves))
			for n, sv := range c.Saves {
				saves[n] = toWireSave(sv)
			}
			body = saves
		case cmdMigrateLearned:
			body = wireMigrate{Save: toWireSave(LearnedSave{Section: c.Section, State: c.State, Full: true}), Legacy: c.Legacy}
		}
		b, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("queue: encode %s command: %w", t, err)
		}
		w.Commands[i] = wireCmd{Type: t, Body: b}
	}
	return json.Marshal(w)
}

// DecodeEntry reads an Entry written by EncodeEntry. Bytes that are not
// one give an error wrapping errEntry; it never panics.
func DecodeEntry(b []byte) (Entry, error) {
	var w wireEntry
	if err := json.Unmarshal(b, &w); err != nil {
		return Entry{}, fmt.Errorf("%w: %v", errEntry, err)
	}
	if w.Format != entryFormat {
		return Entry{}, fmt.Errorf("%w: format %d, this build reads format %d", errEntry, w.Format, entryFormat)
	}
	e := Entry{Index: w.Index, Epoch: w.Epoch, Commands: make([]Command, len(w.Commands))}
	for i, wc := range w.Commands {
		dec, ok := commandTypes[wc.Type]
		if !ok {
			return Entry{}, fmt.Errorf("%w: command %d: unknown type %q", errEntry, i, wc.Type)
		}
		c, err := dec(wc.Body)
		if err != nil {
			return Entry{}, fmt.Errorf("%w: command %d (%s): %v", errEntry, i, wc.Type, err)
		}
		e.Commands[i] = c
	}
	return e, nil
}

func decodeAs[T Command](b []byte) (Command, error) {
	var c T
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, err
	}
	return c, nil
}

func decodeSaveLearned(b []byte) (Command, error) {
	var saves []wireLearnedSave
	if err := json.Unmarshal(b, &saves); err != nil {
		return nil, err
	}
	c := cmdSaveLearned{Saves: make([]LearnedSave, len(saves))}
	for n, w := range saves {
		sv, err := fromWireSave(w)
		if err != nil {
			return nil, fmt.Errorf("save %d: %w", n, err)
		}
		c.Saves[n] = sv
	}
	return c, nil
}

func decodeMigrate(b []byte) (Command, error) {
	var w wireMigrate
	if err := json.Unmarshal(b, &w); err != nil {
		return nil, err
	}
	sv, err := fromWireSave(w.Save)
	if err != nil {
		return nil, err
	}
	return cmdMigrateLearned{Section: sv.Section, State: sv.State, Legacy: w.Legacy}, nil
}

func toWireSave(sv LearnedSave) wireLearnedSave {
	w := wireLearnedSave{Section: sv.Section, Full: sv.Full, Names: sv.State.Names, Meta: sv.State.Meta}
	if sv.State.Dense != nil {
		w.Dense = appendFloats(nil, sv.State.Dense)
	}
	w.Rows = make([][]byte, len(sv.State.Rows))
	for i, r := range sv.State.Rows {
		w.Rows[i] = appendLearnedRow(binary.BigEndian.AppendUint32(nil, uint32(r.Index)), r)
	}
	return w
}

func fromWireSave(w wireLearnedSave) (LearnedSave, error) {
	sv := LearnedSave{Section: w.Section, Full: w.Full, State: Learned{Names: w.Names, Meta: w.Meta}}
	if w.Dense != nil {
		d, err := decodeDense(append([]byte{learnedFormat}, w.Dense...))
		if err != nil {
			return LearnedSave{}, fmt.Errorf("dense: %w", err)
		}
		sv.State.Dense = d
	}
	for i, b := range w.Rows {
		if len(b) < 4 {
			return LearnedSave{}, fmt.Errorf("row %d: %d bytes", i, len(b))
		}
		r, err := decodeLearnedRow(b[4:])
		if err != nil {
			return LearnedSave{}, fmt.Errorf("row %d: %w", i, err)
		}
		r.Index = int(binary.BigEndian.Uint32(b))
		sv.State.Rows = append(sv.State.Rows, r)
	}
	return sv, nil
}
