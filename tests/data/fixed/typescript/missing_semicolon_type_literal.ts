type Size = { width: number; height: number };

type Resize = { fit: "contain" | "cover"; size: Size; upscale?: boolean };

export function scaleToFit(source: Size, target: Size, fit: Resize["fit"]): Size {
  const ratio =
    fit === "contain"
      ? Math.min(target.width / source.width, target.height / source.height)
      : Math.max(target.width / source.width, target.height / source.height);
  return {
    width: Math.round(source.width * ratio),
    height: Math.round(source.height * ratio),
  };
}

export function plan(source: Size, options: Resize): Size {
  const scaled = scaleToFit(source, options.size, options.fit);
  if (!options.upscale && scaled.width > source.width) {
    return source;
  }
  return scaled;
}

console.log(plan({ width: 4000, height: 3000 }, { fit: "contain", size: { width: 800, height: 800 } }));
