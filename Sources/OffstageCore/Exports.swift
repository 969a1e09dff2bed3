@_exported import OffstageProtocol
