"""Start and stop: the server's options, the workspace folders, and the daemon connection."""

from __future__ import annotations

import logging

from lsprotocol import types

from lsp.server import AssistServer

log = logging.getLogger(__name__)


def register(server: AssistServer) -> None:
    @server.feature(types.INITIALIZE)
    def initialize(ls: AssistServer, params: types.InitializeParams) -> None:
        ls.apply_options(params.initialization_options)

    @server.feature(types.INITIALIZED)
    async def initialized(ls: AssistServer, params: types.InitializedParams) -> None:
        ls.profiles.set_folders(ls.folders())
        await pull_configuration(ls)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def changed(ls: AssistServer, params: types.DidChangeConfigurationParams) -> None:
        settings = params.settings
        if isinstance(settings, dict) and settings.get("assist") is not None:
            ls.apply_options(settings["assist"])
        else:
            await pull_configuration(ls)

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    def folders(ls: AssistServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
        ls.profiles.set_folders(ls.folders())

    @server.feature(types.SHUTDOWN)
    async def shutdown(ls: AssistServer, params: None) -> None:
        ls.profiles.close()
        if ls.connection is not None:
            await ls.connection.close()


async def pull_configuration(ls: AssistServer) -> None:
    """Ask the client for the ``assist`` section, when it can answer."""
    capabilities = ls.client_capabilities.workspace
    if capabilities is None or not capabilities.configuration:
        return
    try:
        answer = await ls.workspace_configuration_async(
            types.ConfigurationParams(items=[types.ConfigurationItem(section="assist")])
        )
    except Exception as exc:  # a client that fails this request keeps the initial options
        log.info("workspace/configuration failed: %s", exc)
        return
    if answer and answer[0] is not None:
        ls.apply_options(answer[0])
