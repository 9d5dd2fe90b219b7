from fastapi import FastAPI, HTTPException
from pydantic import BaseModel

app = FastAPI()


class Item(BaseModel):
    sku: str
    quantity: int


STOCK: dict[str, Item] = {}


@app.get("/items/{sku}")
async def get_item(sku: str) -> Item:
    if sku not in STOCK:
        raise HTTPException(status_code=404, detail="unknown sku")
    return STOCK[sku]
