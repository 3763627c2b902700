import FWCore.ParameterSet.Config as cms
process = cms.Process("Analysis")
