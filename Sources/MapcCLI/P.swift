import MapcKit
