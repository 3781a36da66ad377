package lenient

import "testing"

func TestGemmaValues(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{command:<|"|>ls -a<|"|>,n:2,ok:true}`, `{"command":"ls -a","n":2,"ok":true}`},
		{`{command:"ls"}`, `{"command":"ls"}`},                                  // a JSON string where <|"|> belongs
		{`{command:"a \"b\"", x:[1,"y"]}`, `{"command":"a \"b\"","x":[1,"y"]}`}, // escapes decoded
		{`{text:plain words}`, `{"text":"plain words"}`},
	} {
		g := Gemma{Src: []byte(c.in)}
		v := g.Value()
		if v == nil {
			t.Errorf("%s: not read", c.in)
			continue
		}
		if got := string(AppendJSON(nil, v, nil)); got != c.want {
			t.Errorf("%s: %s, want %s", c.in, got, c.want)
		}
	}
}
