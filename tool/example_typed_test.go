package tool_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ptkit/ptk/tool"
)

type WeatherArgs struct {
	City string `json:"city" jsonschema:"the city, e.g. Paris"`
	Unit string `json:"unit,omitempty" enum:"celsius,fahrenheit" jsonschema:"celsius if not given"`
}

type Weather struct {
	City        string  `json:"city"`
	Temperature float64 `json:"temperature"`
	Unit        string  `json:"unit"`
	Sky         string  `json:"sky"`
}

func ExampleNew() {
	weather := tool.New("get_weather", "Gets the current weather in a city.",
		func(ctx context.Context, in WeatherArgs) (Weather, error) {
			w := Weather{City: in.City, Temperature: 21.5, Unit: "celsius", Sky: "clear"}
			if in.Unit == "fahrenheit" {
				w.Temperature, w.Unit = w.Temperature*9/5+32, in.Unit
			}
			return w, nil
		},
		tool.ReadOnly())

	fmt.Println(string(weather.Info().Parameters))

	for _, args := range []string{
		`{"city": "Paris", "unit": "fahrenheit"}`,
		`{"city": "Paris", "unit": "kelvin"}`,
	} {
		res, err := weather.Run(context.Background(), json.RawMessage(args))
		fmt.Printf("error=%v %v\n%s\n", res.IsError, err, res.Content)
	}
	// Output:
	// {"type":"object","properties":{"city":{"type":"string","description":"the city, e.g. Paris"},"unit":{"type":"string","description":"celsius if not given","enum":["celsius","fahrenheit"]}},"required":["city"],"additionalProperties":false}
	// error=false <nil>
	// {
	//   "city": "Paris",
	//   "temperature": 70.7,
	//   "unit": "fahrenheit",
	//   "sky": "clear"
	// }
	// error=true <nil>
	// invalid arguments at /unit: "kelvin" is not one of "celsius", "fahrenheit"
}
