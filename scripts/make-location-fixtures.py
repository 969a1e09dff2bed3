#!/usr/bin/env python3
"""Generates the location fixtures in samples/fixtures/ (deterministic).

- commute.gpx: home -> office -> gym -> home, 1 Hz, about 2.7 hours, with
  traffic-light stops, GPS noise while parked, speed and course.
- jitter-boundary.gpx: walks to the edge of a 500 m region centred on
  48.8566 N, 2.3522 E and wanders back and forth across its boundary,
  always within 180 m of it (inside the 200 m hysteresis band), for ten
  minutes, then walks away.

The NMEA twin of the commute is made with the CLI:
  swift run offstage gps convert samples/fixtures/commute.gpx samples/fixtures/commute.nmea
"""
import math, random, datetime, os

R_LAT = 111_200.0  # metres per degree of latitude near Paris (approx.; only shapes the track)
rng = random.Random(20240506)

def m_per_deg_lon(lat): return R_LAT * math.cos(math.radians(lat))

def move(p, north, east):
    return (p[0] + north / R_LAT, p[1] + east / m_per_deg_lon(p[0]))

def dist(a, b):
    dn = (b[0] - a[0]) * R_LAT
    de = (b[1] - a[1]) * m_per_deg_lon((a[0] + b[0]) / 2)
    return math.hypot(dn, de)

def iso(t):
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")

class Track:
    def __init__(self, start, t0):
        self.pos, self.t, self.points = start, t0, []
        self.bias = [0.0, 0.0]

    def emit(self, speed, course, noise):
        self.bias = [0.95 * b + rng.gauss(0, noise * 0.3) for b in self.bias]
        lat, lon = move(self.pos, self.bias[0] + rng.gauss(0, noise), self.bias[1] + rng.gauss(0, noise))
        ele = 35 + 8 * math.sin(self.t / 900.0) + rng.gauss(0, 0.5)
        self.points.append((lat, lon, ele, self.t, speed, course))
        self.t += 1

    def park(self, seconds):
        for _ in range(seconds):
            self.emit(0.0, None, 2.5)

    def drive(self, dest, cruise):
        # Manhattan-ish legs with a little diagonal, like a street grid.
        legs, p = [], self.pos
        while dist(p, dest) > 50:
            dn = (dest[0] - p[0]) * R_LAT
            de = (dest[1] - p[1]) * m_per_deg_lon(p[0])
            step = rng.uniform(300, 900)
            if abs(dn) > abs(de) if rng.random() < 0.7 else abs(dn) <= abs(de):
                q = move(p, math.copysign(min(step, abs(dn)), dn), rng.uniform(-40, 40))
            else:
                q = move(p, rng.uniform(-40, 40), math.copysign(min(step, abs(de)), de))
            legs.append(q)
            p = q
        legs.append(dest)
        v = 0.0
        for q in legs:
            while True:
                d = dist(self.pos, q)
                if d < 1:
                    break
                stop_ahead = d < 25 and rng.random() < 0.35
                target = 0 if stop_ahead else cruise * rng.uniform(0.85, 1.1)
                v = min(v + 1.8, target) if target > v else max(v - 3.0, target)
                v = max(v, 1.0) if not stop_ahead else v
                step = min(v, d)
                course = math.degrees(math.atan2((q[1] - self.pos[1]) * m_per_deg_lon(self.pos[0]), (q[0] - self.pos[0]) * R_LAT)) % 360
                if step > 0:
                    self.pos = move(self.pos, step * math.cos(math.radians(course)), step * math.sin(math.radians(course)))
                self.emit(step, course, 1.0)
                if stop_ahead and v == 0:
                    for _ in range(rng.randint(15, 50)):
                        self.emit(0.0, course, 1.0)
                    v = 0.5
            # corner: slow down
            v = min(v, 5.0)

def write_gpx(path, name, points, desc):
    with open(path, "w") as f:
        f.write('<?xml version="1.0" encoding="UTF-8"?>\n')
        f.write('<gpx version="1.1" creator="offstage make-location-fixtures.py" xmlns="http://www.topografix.com/GPX/1/1">\n')
        f.write(f'  <metadata><name>{name}</name><desc>{desc}</desc></metadata>\n  <trk>\n    <name>{name}</name>\n    <trkseg>\n')
        for lat, lon, ele, t, speed, course in points:
            f.write(f'      <trkpt lat="{lat:.7f}" lon="{lon:.7f}"><ele>{ele:.1f}</ele><time>{iso(t)}</time></trkpt>\n')
        f.write('    </trkseg>\n  </trk>\n</gpx>\n')

def commute():
    t0 = datetime.datetime(2024, 5, 6, 7, 30, tzinfo=datetime.timezone.utc).timestamp()
    home, office, gym = (48.8412, 2.2650), (48.8920, 2.2385), (48.8695, 2.3070)
    tr = Track(home, t0)
    tr.park(300)
    tr.drive(office, 13.0)
    tr.park(3600)
    tr.drive(gym, 11.0)
    tr.park(2700)
    tr.drive(home, 12.0)
    tr.park(600)
    return tr.points

def jitter():
    centre, radius = (48.8566, 2.3522), 500.0
    t0 = datetime.datetime(2024, 5, 6, 12, 0, tzinfo=datetime.timezone.utc).timestamp()
    pts, t = [], t0
    def at(d, bearing=20.0):
        return move(centre, d * math.cos(math.radians(bearing)), d * math.sin(math.radians(bearing)))
    d = 1200.0
    while d > radius + 150:  # walk in at 1.5 m/s
        lat, lon = at(d); pts.append((lat, lon, 35.0, t, 1.5, 200.0)); t += 1; d -= 1.5
    offset = 150.0
    for i in range(600):  # ten minutes swinging across the boundary, 90 s period
        target = 165 * math.cos(2 * math.pi * i / 90.0)
        offset = max(-178.0, min(178.0, target + rng.gauss(0, 3)))
        lat, lon = at(radius + offset)
        pts.append((lat, lon, 35.0, t, 1.5, 200.0)); t += 1
    d = radius + offset
    while d < 1200:  # walk out
        d += 1.5
        lat, lon = at(d); pts.append((lat, lon, 35.0, t, 1.5, 20.0)); t += 1
    return pts

if __name__ == "__main__":
    out = os.path.join(os.path.dirname(__file__), "..", "samples", "fixtures")
    os.makedirs(out, exist_ok=True)
    c = commute()
    write_gpx(os.path.join(out, "commute.gpx"), "Commute: home, office, gym, home", c,
              "Synthetic 1 Hz drive around Paris, generated by scripts/make-location-fixtures.py")
    j = jitter()
    write_gpx(os.path.join(out, "jitter-boundary.gpx"), "Jitter across a region boundary", j,
              "Region centre 48.8566,2.3522 radius 500 m; the track stays within 180 m of the boundary for 10 minutes")
    print(f"commute: {len(c)} points; jitter: {len(j)} points")
