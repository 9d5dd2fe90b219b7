type Theme = {
  background: string;
  foreground: string;
  accent: string;
};

const themes: Record<string, Theme> = {
  light: {
    background: "#ffffff",
    foreground: "#1f2328",
    accent: "#0969da",
  },
  dark: {
    background: "#0d1117",
    foreground: "#e6edf3",
    accent: "#2f81f7",
};

export function applyTheme(name: string, root: HTMLElement = document.documentElement): void {
  const theme = themes[name] ?? themes.light;
  for (const [key, value] of Object.entries(theme)) {
    root.style.setProperty(`--color-${key}`, value);
  }
  localStorage.setItem("theme", name);
}

export function initialTheme(): string {
  const saved = localStorage.getItem("theme");
  if (saved && saved in themes) return saved;
  return window.matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
}
