package digest

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSentences(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"plain", "The vote passed. The mayor left.", []string{"The vote passed.", "The mayor left."}},
		{"titles", "Dr. Ana Ruiz met Mr. Lee and Prof. Kim. They spoke.", []string{"Dr. Ana Ruiz met Mr. Lee and Prof. Kim.", "They spoke."}},
		{"saint", "The fair opens on St. George's Day. Tickets are free.", []string{"The fair opens on St. George's Day.", "Tickets are free."}},
		{"us mid", "The U.S. Senate voted on Tuesday. It passed.", []string{"The U.S. Senate voted on Tuesday.", "It passed."}},
		{"us end", "The firm moved to the U.S. The move took a year.", []string{"The firm moved to the U.S.", "The move took a year."}},
		{"eg", "Some cities, e.g. Lyon, agreed. Others did not.", []string{"Some cities, e.g. Lyon, agreed.", "Others did not."}},
		{"decimals", "Inflation rose to 3.5 % in May. Prices of $1.2bn were cited.", []string{"Inflation rose to 3.5 % in May.", "Prices of $1.2bn were cited."}},
		{"thousands", "About 1,000 people came. A further 2,500.75 euros were raised.", []string{"About 1,000 people came.", "A further 2,500.75 euros were raised."}},
		{"months", "The law takes effect on Jan. 1. Critics object.", []string{"The law takes effect on Jan. 1.", "Critics object."}},
		{"month end", "Prices rose in Jan. It was the third rise.", []string{"Prices rose in Jan.", "It was the third rise."}},
		{"initials", "The novel by J. K. Rowling sold well. Sales doubled.", []string{"The novel by J. K. Rowling sold well.", "Sales doubled."}},
		{"question quoted", `"Is it safe?" she asked. "Yes," he said.`, []string{`"Is it safe?" she asked.`, `"Yes," he said.`}},
		{"quote closes", `He said: "We are done." Then he left.`, []string{`He said: "We are done."`, "Then he left."}},
		{"curly quote", "She called it “a turning point.” Markets rallied.", []string{"She called it “a turning point.”", "Markets rallied."}},
		{"ellipsis mid", "It was... complicated. Nobody knew.", []string{"It was... complicated.", "Nobody knew."}},
		{"ellipsis end", "They waited… Then the rain came.", []string{"They waited…", "Then the rain came."}},
		{"exclaim", "What a match! The crowd roared.", []string{"What a match!", "The crowd roared."}},
		{"etc end", "They sold apples, pears, etc. The stall closed at noon.", []string{"They sold apples, pears, etc.", "The stall closed at noon."}},
		{"paragraphs", "First line without stop\n\nSecond paragraph.", []string{"First line without stop", "Second paragraph."}},
		{"url", "See example.com for details. It is free.", []string{"See example.com for details.", "It is free."}},
		{"number end", "The score was 3-1. Fans celebrated.", []string{"The score was 3-1.", "Fans celebrated."}},
		// French
		{"fr titles", "M. Dupont et Mme Martin ont signé. Le texte entre en vigueur.", []string{"M. Dupont et Mme Martin ont signé.", "Le texte entre en vigueur."}},
		{"fr guillemets", "« C'est fini. » Le ministre a quitté la salle.", []string{"« C'est fini. »", "Le ministre a quitté la salle."}},
		{"fr question", "Faut-il s'inquiéter ? Les experts sont partagés.", []string{"Faut-il s'inquiéter ?", "Les experts sont partagés."}},
		{"fr decimal", "Le taux atteint 2,5 % en mars. La banque attend.", []string{"Le taux atteint 2,5 % en mars.", "La banque attend."}},
		// German
		{"de zb", "Viele Städte, z.B. Köln, sparen. Andere nicht.", []string{"Viele Städte, z.B. Köln, sparen.", "Andere nicht."}},
		{"de nr", "Die Linie Nr. 5 fährt wieder. Sie war gesperrt.", []string{"Die Linie Nr. 5 fährt wieder.", "Sie war gesperrt."}},
		{"de ordinal", "Die Wahl findet am 3. Mai statt. Die Parteien werben.", []string{"Die Wahl findet am 3. Mai statt.", "Die Parteien werben."}},
		{"de usw", "Es gab Brot, Käse usw. Die Gäste blieben lange.", []string{"Es gab Brot, Käse usw.", "Die Gäste blieben lange."}},
		{"de quote", "„Wir sind bereit“, sagte Hr. Weber. Die Arbeit beginnt.", []string{"„Wir sind bereit“, sagte Hr. Weber.", "Die Arbeit beginnt."}},
		{"de mrd", "Der Konzern meldet 1,2 Mrd. Euro Gewinn. Die Aktie steigt.", []string{"Der Konzern meldet 1,2 Mrd. Euro Gewinn.", "Die Aktie steigt."}},
		// Paragraphs glued where a break was lost.
		{"glued", "The park is near Miami.The accident happened in May.", []string{"The park is near Miami.", "The accident happened in May."}},
		{"glued fr", "Il était positif.En deux semaines, tout a changé.", []string{"Il était positif.", "En deux semaines, tout a changé."}},
		{"glued apostrophe", "au nord de Miami.L'accident s'est produit.", []string{"au nord de Miami.", "L'accident s'est produit."}},
		{"glued quote", `Les scènes en témoignent."Quand je suis venue", raconte-t-elle.`, []string{"Les scènes en témoignent.", `"Quand je suis venue", raconte-t-elle.`}},
		{"glued after quote", `leurs "amis"."La mort est là", disent-ils.`, []string{`leurs "amis".`, `"La mort est là", disent-ils.`}},
		{"glued year", "Elle a ouvert en 2019.Le musée attire des foules.", []string{"Elle a ouvert en 2019.", "Le musée attire des foules."}},
		{"not glued", "Visit www.Example.com or Node.js, ask Mr.Smith and the U.S.Army, e.g.Paris. Ok.", []string{"Visit www.Example.com or Node.js, ask Mr.Smith and the U.S.Army, e.g.Paris.", "Ok."}},
		{"empty", "  \n\n ", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Sentences(tt.in)
			if !slices.Equal(got, tt.want) {
				t.Errorf("Sentences(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

func FuzzSentences(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "sentences", "*.txt"))
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Add("Dr. A. B. met the U.S. team... “Why?” she asked. 3.5 % » Le «")
	f.Fuzz(func(t *testing.T, s string) {
		got := Sentences(s)
		var back strings.Builder
		for _, sent := range got {
			if sent == "" || sent != strings.TrimSpace(sent) {
				t.Fatalf("sentence %q is empty or untrimmed", sent)
			}
			back.WriteString(noSpace(sent))
		}
		// Segmentation only splits: every character but white space
		// comes back, in order.
		if utf8.ValidString(s) && back.String() != noSpace(s) {
			t.Fatalf("text changed:\n in %q\nout %q", noSpace(s), back.String())
		}
	})
}

func noSpace(s string) string {
	return strings.Join(strings.Fields(s), "")
}
