#!/usr/bin/env python3
"""A TCP proxy that adds latency: every byte is held DELAY_MS / 2 on its way in each direction, so a
round trip through it takes DELAY_MS more (the kernel here has no netem). Order and bandwidth are
kept: data is forwarded in the chunks it arrived in, each once its time has come.

    delay-proxy.py LISTEN_PORT TARGET_PORT DELAY_MS      (both on 127.0.0.1; runs until killed)
"""
import asyncio
import sys


async def pump(reader, writer, delay):
    queue = asyncio.Queue()
    loop = asyncio.get_running_loop()

    async def send():
        while True:
            due, data = await queue.get()
            wait = due - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            if data is None:
                break
            writer.write(data)
            await writer.drain()
        try:
            writer.write_eof()
        except OSError:
            pass

    sender = asyncio.create_task(send())
    try:
        while True:
            data = await reader.read(1 << 18)
            if not data:
                break
            await queue.put((loop.time() + delay, data))
    except OSError:
        pass
    await queue.put((loop.time() + delay, None))
    try:
        await sender
    except OSError:
        pass


async def main(listen_port, target_port, delay_ms):
    delay = delay_ms / 2000.0

    async def handle(client_reader, client_writer):
        try:
            server_reader, server_writer = await asyncio.open_connection("127.0.0.1", target_port)
        except OSError:
            client_writer.close()
            return
        await asyncio.gather(pump(client_reader, server_writer, delay), pump(server_reader, client_writer, delay))
        client_writer.close()
        server_writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", listen_port)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])))
