interface Weather {
  city: string;
  temperatureC: number;
  conditions: string;
}

const API = "https://api.example.com/v1/weather";

export async function fetchWeather(city: string, signal?: AbortSignal): Promise<Weather> {
  const url = `${API}?city=${encodeURIComponent(city)}`;
  const res = await fetch(url, { signal });
  if (!res.ok {
    throw new Error(`weather for ${city}: HTTP ${res.status}`);
  }
  const data = (await res.json()) as Partial<Weather>;
  if (typeof data.temperatureC !== "number") {
    throw new Error("malformed response");
  }
  return {
    city,
    temperatureC: data.temperatureC,
    conditions: data.conditions ?? "unknown",
  };
}

export function describe(weather: Weather): string {
  const f = weather.temperatureC * 1.8 + 32;
  return `${weather.city}: ${weather.conditions}, ${weather.temperatureC}°C (${f.toFixed(0)}°F)`;
}
